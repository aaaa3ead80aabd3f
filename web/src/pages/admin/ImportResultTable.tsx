import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableContainer from '@mui/material/TableContainer';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import ToggleButton from '@mui/material/ToggleButton';
import ToggleButtonGroup from '@mui/material/ToggleButtonGroup';
import Typography from '@mui/material/Typography';
import { useMemo, useState } from 'react';
import { csvLine, type AppointmentImportResult } from '@portal/contracts';
import { appointmentTime } from '../../api/appointments';
import { refusalInWords } from './appointment-words';
import { SEPARATE_TOGGLES } from './separate-toggles';

export type ImportOutcome = 'created' | 'moved' | 'updated' | 'unchanged' | 'refused';

/** One line of the file and what became of it (or would, in a dry run). */
export interface ImportLine {
  line: number;
  outcome: ImportOutcome;
  email: string;
  name: string;
  start: string | null;
  previousStart: string | null;
  reason: string | null;
  message: string | null;
}

const OUTCOMES: readonly ImportOutcome[] = ['created', 'moved', 'updated', 'unchanged', 'refused'];

/** The outcome in words, as done and as planned. */
const OUTCOME_WORDS: Record<ImportOutcome, { done: string; planned: string }> = {
  created: { done: 'Created', planned: 'Will be created' },
  moved: { done: 'Moved', planned: 'Will be moved' },
  updated: { done: 'Updated', planned: 'Will be updated' },
  unchanged: { done: 'Unchanged', planned: 'Stays as it is' },
  refused: { done: 'Refused', planned: 'Will be refused' },
};

/** Every line of a result, in the file's order. */
export function importLines(result: AppointmentImportResult): ImportLine[] {
  const lines: ImportLine[] = [
    ...result.created.map((entry) => ({ ...entry, outcome: 'created' as const, previousStart: null })),
    ...result.updated.map((entry) => ({
      ...entry,
      outcome: entry.moved ? ('moved' as const) : ('updated' as const),
      previousStart: entry.moved ? entry.previous_start : null,
    })),
    ...result.unchanged.map((entry) => ({ ...entry, outcome: 'unchanged' as const, previousStart: null })),
  ].map(({ line, outcome, email, name, start, previousStart }) => ({
    line,
    outcome,
    email,
    name,
    start,
    previousStart,
    reason: null,
    message: null,
  }));
  for (const { line, reason, message } of result.refused)
    lines.push({ line, outcome: 'refused', email: '', name: '', start: null, previousStart: null, reason, message });
  return lines.sort((a, b) => a.line - b.line);
}

export function countsOf(lines: readonly ImportLine[]): Record<ImportOutcome, number> {
  const counts = { created: 0, moved: 0, updated: 0, unchanged: 0, refused: 0 };
  for (const line of lines) counts[line.outcome]++;
  return counts;
}

/** "120 created, 3 moved, 4 refused" (outcomes with none left out). */
export function countsInWords(counts: Record<ImportOutcome, number>): string {
  const parts = OUTCOMES.filter((outcome) => counts[outcome] > 0).map((outcome) => `${counts[outcome]} ${outcome}`);
  return parts.length > 0 ? parts.join(', ') : 'no lines';
}

/**
 * The result as a CSV file (csvLine: the portal's one CSV rule, formulas neutralised), with a
 * byte-order mark so that a spreadsheet reads the names' accents as UTF-8.
 */
export function importResultCsv(lines: readonly ImportLine[], timeZone: string): string {
  const header = csvLine(['line', 'outcome', 'email', 'name', `start (${timeZone})`, `previous start (${timeZone})`, 'reason', 'message']);
  const rows = lines.map((line) =>
    csvLine([
      line.line,
      line.outcome,
      line.email,
      line.name,
      line.start ? appointmentTime(line.start, timeZone) : '',
      line.previousStart ? appointmentTime(line.previousStart, timeZone) : '',
      line.reason ? refusalInWords(line.reason) : '',
      line.message ?? '',
    ]),
  );
  return `\ufeff${header}${rows.join('')}`;
}

const PAGE = 100;

/**
 * The lines of an import (or of its preview) in a table: line, outcome in words, and who, when
 * and why; filtered by outcome, a hundred at a time.
 */
export function ImportResultTable({ lines, timeZone, planned }: { lines: readonly ImportLine[]; timeZone: string; planned: boolean }) {
  const counts = useMemo(() => countsOf(lines), [lines]);
  const [filter, setFilter] = useState<ImportOutcome | 'all'>('all');
  const [shown, setShown] = useState(PAGE);
  const filtered = filter === 'all' ? lines : lines.filter((line) => line.outcome === filter);
  const words = (outcome: ImportOutcome) => OUTCOME_WORDS[outcome][planned ? 'planned' : 'done'];
  return (
    <Box>
      <ToggleButtonGroup
        exclusive
        size="small"
        value={filter}
        onChange={(_event, value: ImportOutcome | 'all' | null) => {
          if (!value) return;
          setFilter(value);
          setShown(PAGE);
        }}
        aria-label="Show lines"
        sx={[SEPARATE_TOGGLES, { flexWrap: 'wrap', mb: 1, '& .MuiToggleButton-root': { minHeight: 44 } }]}
      >
        <ToggleButton value="all">{`All (${lines.length})`}</ToggleButton>
        {OUTCOMES.filter((outcome) => counts[outcome] > 0).map((outcome) => (
          <ToggleButton key={outcome} value={outcome}>
            {`${OUTCOME_WORDS[outcome].done} (${counts[outcome]})`}
          </ToggleButton>
        ))}
      </ToggleButtonGroup>
      <TableContainer>
        <Table size="small" aria-label={planned ? 'What the import will do, line by line' : 'What the import did, line by line'}>
          <TableHead>
            <TableRow>
              <TableCell sx={{ width: '3.5em' }}>Line</TableCell>
              <TableCell sx={{ width: '30%' }}>Outcome</TableCell>
              <TableCell>Details</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {filtered.slice(0, shown).map((line) => (
              <TableRow
                key={`${line.line}-${line.outcome}`}
                sx={line.outcome === 'refused' ? { bgcolor: 'rgba(180, 83, 9, 0.06)' } : undefined}
              >
                <TableCell sx={{ verticalAlign: 'top' }}>{line.line}</TableCell>
                <TableCell sx={{ verticalAlign: 'top', fontWeight: line.outcome === 'refused' ? 700 : 400 }}>
                  {words(line.outcome)}
                </TableCell>
                <TableCell sx={{ verticalAlign: 'top', overflowWrap: 'anywhere' }}>
                  {line.outcome === 'refused' ? (
                    <>
                      <Typography component="span" variant="body2" sx={{ fontWeight: 600, display: 'block' }}>
                        {refusalInWords(line.reason ?? '')}
                      </Typography>
                      <Typography component="span" variant="body2">
                        {line.message}
                      </Typography>
                    </>
                  ) : (
                    <>
                      <Typography component="span" variant="body2" sx={{ display: 'block' }}>
                        {line.name ? `${line.name} · ${line.email}` : line.email}
                      </Typography>
                      <Typography component="span" variant="body2" color="text.secondary">
                        {line.start ? appointmentTime(line.start, timeZone) : ''}
                        {line.previousStart ? ` (was ${appointmentTime(line.previousStart, timeZone)})` : ''}
                      </Typography>
                    </>
                  )}
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </TableContainer>
      {filtered.length > shown ? (
        <Button onClick={() => setShown((count) => count + PAGE)} sx={{ mt: 1 }}>
          {`Show ${Math.min(PAGE, filtered.length - shown)} more of ${filtered.length - shown}`}
        </Button>
      ) : null}
    </Box>
  );
}
