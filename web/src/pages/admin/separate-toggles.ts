import type { SystemStyleObject } from '@mui/system';
import type { Theme } from '@mui/material/styles';

/**
 * A ToggleButtonGroup whose buttons wrap onto more than one row (a phone's width): each button
 * keeps its whole border and corners instead of the group's joined edges, which break at a wrap.
 */
export const SEPARATE_TOGGLES: SystemStyleObject<Theme> = {
  gap: 0.75,
  '& .MuiToggleButtonGroup-grouped, & .MuiToggleButtonGroup-grouped:not(:first-of-type)': {
    m: 0,
    border: 1,
    borderColor: 'divider',
    borderRadius: 1,
  },
};
