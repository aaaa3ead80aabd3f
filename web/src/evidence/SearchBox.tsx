import Box from '@mui/material/Box';
import { alpha, type SxProps, type Theme } from '@mui/material/styles';
import { useEffect, useId, useRef, useState } from 'react';
import { SEARCH_MAX_LENGTH } from '@portal/contracts';

interface SearchBoxProps {
  label: string;
  /** The search in effect; typing reports a new one after a short pause (or at once on Enter). */
  value: string;
  onSearch: (q: string) => void;
  placeholder?: string;
}

const PAUSE_MS = 350;

/**
 * A labelled search field (a native `input type="search"` in a `role="search"` landmark): the
 * archive is a first page of phones, and the component kit's text field would add to its code.
 */
export function SearchBox({ label, value, onSearch, placeholder }: SearchBoxProps) {
  const id = useId();
  const [text, setText] = useState(value);
  const latest = useRef(onSearch);
  latest.current = onSearch;

  useEffect(() => {
    if (text.trim() === value.trim()) return;
    const timer = setTimeout(() => latest.current(text.trim()), PAUSE_MS);
    return () => clearTimeout(timer);
  }, [text, value]);

  return (
    <Box
      component="form"
      role="search"
      sx={{ mb: 2, maxWidth: 480 }}
      onSubmit={(event) => {
        event.preventDefault();
        latest.current(text.trim());
      }}
    >
      <Box component="label" htmlFor={id} sx={{ display: 'block', typography: 'body2', fontWeight: 600, mb: 0.5 }}>
        {label}
      </Box>
      <Box
        component="input"
        id={id}
        type="search"
        name="q"
        autoComplete="off"
        enterKeyHint="search"
        maxLength={SEARCH_MAX_LENGTH}
        placeholder={placeholder}
        value={text}
        onChange={(event: React.ChangeEvent<HTMLInputElement>) => setText(event.target.value)}
        sx={inputSx}
      />
    </Box>
  );
}

const inputSx = {
  width: '100%',
  boxSizing: 'border-box',
  minHeight: 44,
  px: 1.5,
  font: 'inherit',
  color: 'text.primary',
  bgcolor: 'background.paper',
  border: 1,
  borderColor: 'divider',
  borderRadius: 1,
  '&::placeholder': { color: 'text.secondary', opacity: 1 },
  '&:focus-visible': (theme: Theme) => ({
    outline: `2px solid ${theme.palette.primary.main}`,
    outlineOffset: 0,
    boxShadow: `0 0 0 4px ${alpha(theme.palette.primary.main, 0.15)}`,
  }),
} satisfies SxProps<Theme>;
