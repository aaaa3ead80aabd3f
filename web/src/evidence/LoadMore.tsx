import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import CircularProgress from '@mui/material/CircularProgress';
import { useEffect, useRef } from 'react';

interface LoadMoreProps {
  hasMore: boolean;
  loading: boolean;
  onLoadMore: () => void;
}

/**
 * The end of an endless list: when it comes near the screen (IntersectionObserver) the next page
 * loads; a button does the same for keyboards and for browsers without the observer.
 */
export function LoadMore({ hasMore, loading, onLoadMore }: LoadMoreProps) {
  const sentinel = useRef<HTMLDivElement>(null);
  const latest = useRef({ hasMore, loading, onLoadMore });
  latest.current = { hasMore, loading, onLoadMore };

  useEffect(() => {
    const element = sentinel.current;
    if (!element || typeof IntersectionObserver === 'undefined') return;
    const observer = new IntersectionObserver(
      (entries) => {
        const { hasMore: more, loading: busy, onLoadMore: load } = latest.current;
        if (entries.some((entry) => entry.isIntersecting) && more && !busy) load();
      },
      { rootMargin: '600px 0px' },
    );
    observer.observe(element);
    return () => observer.disconnect();
    // Observed anew after each page: if the end is still in view, the next page loads too.
  }, [hasMore, loading]);

  if (!hasMore) return null;
  return (
    <Box ref={sentinel} sx={{ display: 'flex', justifyContent: 'center', py: 3 }}>
      {loading ? (
        <Box role="status" sx={{ display: 'flex', alignItems: 'center', gap: 1 }}>
          <CircularProgress size={24} aria-hidden="true" />
          Loading more…
        </Box>
      ) : (
        <Button variant="outlined" onClick={onLoadMore}>
          Load more
        </Button>
      )}
    </Box>
  );
}
