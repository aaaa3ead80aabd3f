import { describe, expect, it } from 'vitest';
import { csvLine } from '../src/index.js';

/** The cells a spreadsheet makes of one line when it splits on `separator` and ignores quotes. */
function naiveCells(line: string, separator: string): string[] {
  return line
    .replace(/\r\n$/, '')
    .split(separator)
    .map((cell) => cell.replace(/^"/, '').trimStart());
}

const formula = /^[=+\-@]/;

describe('csvLine', () => {
  it('quotes every text cell and leaves numbers, booleans and empty cells bare', () => {
    expect(csvLine(['plain', 3, false, null, undefined, 'say "hi"'])).toBe('"plain",3,false,,,"say ""hi"""\r\n');
  });

  it('neutralises a formula at the start of a cell', () => {
    for (const start of ['=', '+', '-', '@', '\t', '\r']) {
      expect(csvLine([`${start}1+1`])).toBe(`"'${start}1+1"\r\n`);
    }
  });

  it.each([
    ['a semicolon', ';'],
    ['a comma', ','],
    ['a tab', '\t'],
  ])('neutralises a formula behind %s, for a spreadsheet that splits there', (_name, separator) => {
    const value = `Report${separator}=cmd|' /C calc'!A0${separator} +1+1${separator}@SUM(A1)${separator}-2+cmd|' /C calc'!A0`;
    const line = csvLine(['id-1', value]);
    for (const cell of naiveCells(line, separator)) expect(cell, JSON.stringify(line)).not.toMatch(formula);
    expect(line).toContain(`Report${separator}'=cmd|`);
  });

  it('neutralises a formula on a new line inside a cell', () => {
    const line = csvLine(['ok\n=1+1', 'ok\r\n+1+1']);
    expect(line).toBe(`"ok\n'=1+1","ok\r\n'+1+1"\r\n`);
  });

  it('leaves a signed number behind a separator as written, as in a position', () => {
    expect(csvLine(['40.71280, -74.00600 (±15 m)', '1;+2;-3.5'])).toBe('"40.71280, -74.00600 (±15 m)","1;+2;-3.5"\r\n');
    expect(csvLine(['1, -2+cmd|x!A0', '1, -2 (±15 m) =1'])).toBe(`"1,' -2+cmd|x!A0","1,' -2 (±15 m) =1"\r\n`);
  });
});
