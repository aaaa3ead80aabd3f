import Container from '@mui/material/Container';
import Typography from '@mui/material/Typography';
import { useEffect, type ReactNode } from 'react';

/** A page: one h1 heading and the content below it, in a column that suits a phone. */
export function Page({ title, children, maxWidth = 'sm' }: { title: ReactNode; children?: ReactNode; maxWidth?: 'sm' | 'md' | 'lg' }) {
  useEffect(() => {
    if (typeof title === 'string') document.title = title;
  }, [title]);
  return (
    <Container component="main" maxWidth={maxWidth} sx={{ py: { xs: 3, sm: 5 }, px: { xs: 2, sm: 3 } }}>
      <Typography variant="h1" component="h1" gutterBottom sx={{ overflowWrap: 'anywhere' }}>
        {title}
      </Typography>
      {children}
    </Container>
  );
}
