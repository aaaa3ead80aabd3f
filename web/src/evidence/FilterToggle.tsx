import Box from '@mui/material/Box';
import ToggleButton from '@mui/material/ToggleButton';
import ToggleButtonGroup from '@mui/material/ToggleButtonGroup';
import Typography from '@mui/material/Typography';
import { useId } from 'react';
import type { MediaType } from '@portal/contracts';
import { EVIDENCE_FILTERS } from './format';

/** 'Filter Evidence': All / Notes / Photos / Videos / Audio. */
export function FilterToggle({ value, onChange }: { value: MediaType | null; onChange: (type: MediaType | null) => void }) {
  const labelId = useId();
  return (
    <Box sx={{ mb: 2 }}>
      <Typography id={labelId} component="h2" variant="body2" sx={{ fontWeight: 600, mb: 0.5 }}>
        Filter Evidence
      </Typography>
      <ToggleButtonGroup
        exclusive
        size="small"
        color="primary"
        aria-labelledby={labelId}
        value={value ?? 'all'}
        onChange={(_event, next: MediaType | 'all' | null) => {
          if (next !== null) onChange(next === 'all' ? null : next);
        }}
        sx={{ flexWrap: 'wrap', '& .MuiToggleButton-root': { px: { xs: 1.2, sm: 1.5 }, minHeight: 44, textTransform: 'none' } }}
      >
        {EVIDENCE_FILTERS.map((filter) => (
          <ToggleButton key={filter.label} value={filter.value ?? 'all'}>
            {filter.label}
          </ToggleButton>
        ))}
      </ToggleButtonGroup>
    </Box>
  );
}
