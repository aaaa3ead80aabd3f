import Box from '@mui/material/Box';
import ButtonBase from '@mui/material/ButtonBase';
import Typography from '@mui/material/Typography';
import { alpha, type SxProps, type Theme } from '@mui/material/styles';
import { useId } from 'react';
import type { MediaType } from '@portal/contracts';
import { EVIDENCE_FILTERS } from './format';

/**
 * 'Filter Evidence': All / Notes / Photos / Videos / Audio, one pressed at a time.
 *
 * A labelled group of toggle buttons (`aria-pressed`), as Material UI's ToggleButtonGroup renders
 * it, drawn here on ButtonBase (already in every page's code: ripple, keyboard focus ring) with
 * the group's look: the archive is a first page of phones, and ToggleButton with its group was
 * 2 KB gzipped of it.
 */
export function FilterToggle({ value, onChange }: { value: MediaType | null; onChange: (type: MediaType | null) => void }) {
  const labelId = useId();
  return (
    <Box sx={{ mb: 2 }}>
      <Typography id={labelId} component="h2" variant="body2" sx={{ fontWeight: 600, mb: 0.5 }}>
        Filter Evidence
      </Typography>
      <Box role="group" aria-labelledby={labelId} sx={groupSx}>
        {EVIDENCE_FILTERS.map((filter) => {
          const pressed = filter.value === value;
          return (
            <ButtonBase key={filter.label} focusRipple aria-pressed={pressed} onClick={() => onChange(filter.value)}>
              {filter.label}
            </ButtonBase>
          );
        })}
      </Box>
    </Box>
  );
}

/** Segments joined into one outlined bar; the pressed one in the primary colour (also the administration's filters). */
export const groupSx = {
  display: 'inline-flex',
  flexWrap: 'wrap',
  '& > button': (theme) => ({
    ...theme.typography.button,
    fontSize: theme.typography.pxToRem(13),
    minHeight: 44,
    px: { xs: 1.2, sm: 1.5 },
    py: '7px',
    // text.secondary, not action.active: 5.3:1 on the page's background (action.active is 4.48:1).
    color: theme.palette.text.secondary,
    border: `1px solid ${theme.palette.divider}`,
    '&:not(:first-of-type)': { marginLeft: '-1px', borderLeftColor: 'transparent' },
    '&:first-of-type': { borderTopLeftRadius: radius(theme), borderBottomLeftRadius: radius(theme) },
    '&:last-of-type': { borderTopRightRadius: radius(theme), borderBottomRightRadius: radius(theme) },
    '&[aria-pressed="true"]': {
      color: theme.palette.primary.main,
      backgroundColor: alpha(theme.palette.primary.main, theme.palette.action.selectedOpacity),
    },
    '&.Mui-focusVisible': { outline: `2px solid ${theme.palette.primary.main}`, outlineOffset: -2, zIndex: 1 },
    // Hover colours only where there is a pointer that hovers (a touch leaves :hover stuck).
    '@media (hover: hover)': {
      '&:hover': { backgroundColor: alpha(theme.palette.text.primary, theme.palette.action.hoverOpacity) },
      '&[aria-pressed="true"]:hover': {
        backgroundColor: alpha(theme.palette.primary.main, theme.palette.action.selectedOpacity + theme.palette.action.hoverOpacity),
      },
    },
  }),
} satisfies SxProps<Theme>;

function radius(theme: Theme): string {
  return `${theme.shape.borderRadius}px`;
}
