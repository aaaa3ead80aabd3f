// Types of portal-backup.mjs, for the infrastructure test that drives it.
export interface BackupS3 {
  bucket: string;
  region: string;
  endpoint?: string | undefined;
  forcePathStyle: boolean;
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
  prefix?: string | undefined;
}
export interface BackupServers {
  mongoUrl: string;
  s3: BackupS3;
}
export interface BackupManifest {
  format: number;
  namespace: string;
  startedAt: string;
  finishedAt: string;
  databases: Record<string, Record<string, number>>;
  s3: { bucket: string; prefix: string; objects: number; bytes: number; copied?: boolean };
}
export function serversFromEnv(env?: NodeJS.ProcessEnv): BackupServers;
export const DEFAULT_PARALLEL: number;
export const NO_SPACE_EXIT_CODE: number;
export const STALE_MS: number;
export class NoSpaceError extends Error {}
export function parseSize(text: string): number;
export function freeBytes(dir: string): Promise<number>;
export function checkFreeSpace(options: {
  dir: string;
  needed: number;
  reserve?: number;
  what?: string;
}): Promise<{ free: number; needed: number }>;
export function backupName(date?: Date): string;
export function estimateBackup(
  options: BackupServers & { namespace: string; objects?: 'copy' | 'list' },
): Promise<{ mongoBytes: number; objectBytes: number; objects: number; bucketBytes: number; total: number }>;
export function eachBounded<T>(items: Iterable<T> | AsyncIterable<T>, limit: number, work: (item: T) => Promise<void>): Promise<void>;
export function backup(
  options: BackupServers & {
    namespace: string;
    objects?: 'copy' | 'list';
    reserve?: number;
    parallel?: number;
    log?: (line: string) => void | Promise<void>;
  } & ({ out: string; root?: undefined } | { root: string; keep: number; out?: undefined }),
): Promise<BackupManifest & { folder: string }>;
export function restore(
  options: BackupServers & { namespace: string; from: string; parallel?: number; log?: (line: string) => void },
): Promise<{ databases: Record<string, Record<string, number>>; objects: number }>;
export function prune(options: { root: string; keep: number; log?: (line: string) => void; now?: number }): Promise<string[]>;
export function verify(options: BackupServers & { namespace: string; from: string }): Promise<string[]>;
