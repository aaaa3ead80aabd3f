import { createTheme } from '@mui/material/styles';

/**
 * Mobile first: participants read this on a phone outdoors, so high contrast, a system font
 * (nothing to download), 48 px touch targets and button texts exactly as written.
 */
export const theme = createTheme({
  palette: {
    mode: 'light',
    primary: { main: '#1f3a5f' },
    secondary: { main: '#b3261e' },
    // Darker than Material's #d32f2f, whose text on the page background is 4.45:1 (4.5 needed).
    error: { main: '#c62828' },
    // The toasts are filled alerts, white text on these: Material's info (#0288d1, 3.9:1) and
    // warning (#ed6c02, 3.1:1) are too light for it; these are 4.8:1 and 5.0:1.
    info: { main: '#0277bd' },
    warning: { main: '#b45309' },
    background: { default: '#f4f2ee', paper: '#ffffff' },
  },
  typography: {
    fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
    h1: { fontSize: '1.9rem', fontWeight: 700 },
    h2: { fontSize: '1.5rem', fontWeight: 700 },
    h3: { fontSize: '1.25rem', fontWeight: 600 },
    body1: { fontSize: '1.05rem', lineHeight: 1.6 },
    button: { textTransform: 'none', fontWeight: 600, fontSize: '1rem' },
  },
  shape: { borderRadius: 10 },
  components: {
    // A word longer than the screen is wide (a German place name, an address, a link someone
    // typed) breaks where it would overflow, on every screen, instead of widening the page past a
    // phone's edge. Only such words break: the width of everything else is as before.
    MuiCssBaseline: { styleOverrides: { body: { overflowWrap: 'break-word' } } },
    MuiButton: {
      defaultProps: { disableElevation: true },
      styleOverrides: { root: { minHeight: 48, paddingInline: 20 } },
    },
    MuiIconButton: { styleOverrides: { root: { minWidth: 48, minHeight: 48 } } },
    MuiMenuItem: { styleOverrides: { root: { minHeight: 48 } } },
    MuiTextField: { defaultProps: { fullWidth: true, margin: 'normal' } },
  },
});
