import { describe, expect, it } from 'vitest';
import { STATEMENT_CACHE_SIZE, openDatabase } from '../src/sqlite/open-database.js';

describe('openDatabase: prepared statements are reused', () => {
  it('answers the same statement for the same SQL, and it works each time', () => {
    const db = openDatabase(':memory:', ['CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)']);
    const insert = db.prepare('INSERT INTO notes (text) VALUES (?)');
    expect(db.prepare('INSERT INTO notes (text) VALUES (?)')).toBe(insert);
    db.prepare('INSERT INTO notes (text) VALUES (?)').run('one');
    db.prepare('INSERT INTO notes (text) VALUES (?)').run('two');
    expect(db.prepare('SELECT text FROM notes ORDER BY id').all()).toEqual([{ text: 'one' }, { text: 'two' }]);
    db.close();
  });

  it('sees a schema change made after the statement was first prepared', () => {
    const db = openDatabase(':memory:', ['CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)']);
    db.prepare('INSERT INTO notes (text) VALUES (?)').run('one');
    expect(db.prepare('SELECT * FROM notes').get()).toEqual({ id: 1, text: 'one' });
    db.exec("ALTER TABLE notes ADD COLUMN author TEXT NOT NULL DEFAULT 'someone'");
    expect(db.prepare('SELECT * FROM notes').get()).toEqual({ id: 1, text: 'one', author: 'someone' });
    db.close();
  });

  it('keeps a bounded number, the least recently used going first', () => {
    const db = openDatabase(':memory:');
    const first = db.prepare('SELECT 0 AS n');
    const kept = db.prepare('SELECT 1 AS n');
    for (let n = 2; n <= STATEMENT_CACHE_SIZE; n++) {
      db.prepare(`SELECT ${n} AS n`);
      if (n % 50 === 0) expect(db.prepare('SELECT 1 AS n')).toBe(kept); // used recently: kept
    }
    expect(db.prepare('SELECT 1 AS n')).toBe(kept);
    expect(db.prepare('SELECT 0 AS n')).not.toBe(first);
    expect(db.prepare('SELECT 0 AS n').get()).toEqual({ n: 0 });
    db.close();
  });
});
