import type { AuditAction, AuditEntry } from '@portal/contracts';

/** How each recorded act reads in the Activity view. */
export const ACTION_LABELS: Record<AuditAction, string> = {
  'admin.login': 'Logged in',
  'evidence.publish': 'Made an item public',
  'evidence.unpublish': 'Made an item private',
  'evidence.publish-all': 'Made all evidence public',
  'evidence.unpublish-all': 'Made all evidence private',
  'evidence.mark-reviewed': 'Marked an item reviewed',
  'evidence.faces-edit': 'Changed the faces hidden in an item',
  'evidence.faces-consent': 'Recorded whether faces may be shown',
  'evidence.edit': 'Edited an item',
  'evidence.delete': 'Deleted an item',
  'evidence.export': 'Exported evidence',
  'user.edit': 'Edited a user',
  'user.delete': 'Deleted a user',
  'user.promote': 'Made a user an administrator',
  'user.export': "Exported a user's data",
  'appointment.import': 'Imported appointments',
  'appointment.create': 'Set an appointment',
  'appointment.move': 'Moved or changed an appointment',
  'appointment.cancel': 'Cancelled an appointment',
  'appointment.status': "Set an appointment's status",
  'appointment.announce': 'Sent an announcement',
};

/** "title: old → new" for each field an act changed. */
export function changesOf(entry: AuditEntry): string[] {
  const before = entry.before ?? {};
  const after = entry.after ?? {};
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  const show = (value: unknown) => (value === undefined ? '—' : typeof value === 'string' ? value : JSON.stringify(value));
  return fields.map((field) =>
    field in after ? `${field}: ${show(before[field])} → ${show(after[field])}` : `${field}: ${show(before[field])}`,
  );
}

export function targetOf(entry: AuditEntry): string {
  if (entry.erased && entry.target_label === null && entry.target_type === 'user') return 'a deleted participant';
  if (entry.target_label) return entry.target_label;
  if (entry.erased) return "a deleted participant's item";
  return entry.target_type === 'archive' ? 'the whole archive' : (entry.target_id ?? '—');
}
