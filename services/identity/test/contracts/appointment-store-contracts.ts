import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createEvent } from '@portal/platform';
import { DuplicateAppointmentError, type AppointmentRecord, type AppointmentStore } from '../../src/repositories/appointment-store.js';

export function sampleAppointment(overrides: Partial<AppointmentRecord> = {}): AppointmentRecord {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    email: `holder-${randomUUID().slice(0, 8)}@example.org`,
    name: '',
    start: '2030-07-01T16:30:00.000Z',
    time_zone: 'Europe/Berlin',
    place: 'the corner of Main Street and First Avenue',
    note: '',
    phone_input: '',
    version: 1,
    status: 'waiting',
    status_updated_at: null,
    deliveries: [],
    created_at: now,
    updated_at: now,
    ...overrides,
  };
}

const event = (key: string) => ({ topic: 'identity.appointments', event: createEvent({ type: 'appointment.scheduled', key, data: {} }) });

/** The contract of the appointment store, for every adapter (SQLite, MongoDB). */
export function appointmentStoreContract(name: string, create: () => Promise<AppointmentStore>): void {
  describe(`AppointmentStore contract: ${name}`, () => {
    it('creates, finds by id and by address regardless of case, and refuses a second appointment for an address', async () => {
      const store = await create();
      const record = sampleAppointment();
      await store.create(record, [event(record.id)]);
      expect(await store.findById(record.id)).toEqual(record);
      expect(await store.findByEmail(record.email.toUpperCase())).toEqual(record);
      await expect(store.create(sampleAppointment({ email: record.email.toUpperCase() }), [])).rejects.toBeInstanceOf(
        DuplicateAppointmentError,
      );
    });

    it("keeps the box office's name of the ticket holder, and changes it with a replace", async () => {
      const store = await create();
      const record = sampleAppointment({ name: 'Zoë Ticketholder-Ñúñez' });
      await store.create(record, []);
      expect((await store.findById(record.id))?.name).toBe('Zoë Ticketholder-Ñúñez');
      expect((await store.findByEmail(record.email))?.name).toBe('Zoë Ticketholder-Ñúñez');
      expect(await store.replace({ ...record, name: 'Zoe N.' }, 1, [])).toBe(true);
      expect((await store.findById(record.id))?.name).toBe('Zoe N.');
      expect(
        (await store.listBetween('2030-07-01T00:00:00.000Z', '2030-07-02T00:00:00.000Z')).find((one) => one.id === record.id)?.name,
      ).toBe('Zoe N.');
    });

    it('replaces only at the expected version (two moves at once: one wins)', async () => {
      const store = await create();
      const record = sampleAppointment();
      await store.create(record, []);
      const moves = await Promise.all([
        store.replace({ ...record, start: '2030-07-01T17:00:00.000Z', version: 2 }, 1, [event(record.id)]),
        store.replace({ ...record, start: '2030-07-01T18:00:00.000Z', version: 2 }, 1, [event(record.id)]),
      ]);
      expect(moves.filter(Boolean)).toHaveLength(1);
      expect((await store.findById(record.id))?.version).toBe(2);
      expect(await store.replace({ ...record, version: 3 }, 1, [])).toBe(false);
    });

    it('lists a span in time order, start inclusive and end exclusive', async () => {
      const store = await create();
      const day = `20${40 + Math.floor(Math.random() * 50)}-0${1 + Math.floor(Math.random() * 8)}-1${Math.floor(Math.random() * 9)}`;
      const late = sampleAppointment({ start: `${day}T20:00:00.000Z` });
      const early = sampleAppointment({ start: `${day}T08:00:00.000Z` });
      const edge = sampleAppointment({ start: `${day}T23:59:59.999Z` });
      for (const record of [late, early, edge]) await store.create(record, []);
      const listed = await store.listBetween(`${day}T08:00:00.000Z`, `${day}T23:59:59.999Z`);
      expect(listed.map((record) => record.id)).toEqual([early.id, late.id]);
    });

    it('sets the status, and records deliveries only for the current version, one per key', async () => {
      const store = await create();
      const record = sampleAppointment();
      await store.create(record, []);
      const at = new Date().toISOString();
      expect((await store.setStatus(record.id, 'called', at, []))?.status).toBe('called');
      expect(await store.setStatus(randomUUID(), 'called', at, [])).toBeNull();
      const delivery = {
        key: '2h:sms',
        kind: 'reminder' as const,
        offset: '2h',
        channel: 'sms' as const,
        state: 'failed' as const,
        at,
        reason: 'provider down',
      };
      expect(await store.recordDelivery(record.id, 1, delivery)).toBe(true);
      expect(await store.recordDelivery(record.id, 1, { ...delivery, state: 'sent', reason: null })).toBe(true);
      expect(await store.recordDelivery(record.id, 2, { ...delivery, key: '24h:sms' })).toBe(false);
      await Promise.all(
        ['a', 'b', 'c'].map((key) =>
          store.recordDelivery(record.id, 1, { ...delivery, key: `${key}:email`, channel: 'email', state: 'sent', reason: null }),
        ),
      );
      const stored = await store.findById(record.id);
      expect(stored?.deliveries.find((entry) => entry.key === '2h:sms')?.state).toBe('sent');
      expect(stored?.deliveries.map((entry) => entry.key).sort()).toEqual(['2h:sms', 'a:email', 'b:email', 'c:email']);
    });

    it('deletes, freeing the address', async () => {
      const store = await create();
      const record = sampleAppointment();
      await store.create(record, []);
      expect(await store.delete(record.id, [event(record.id)])).toBe(true);
      expect(await store.delete(record.id, [])).toBe(false);
      expect(await store.findById(record.id)).toBeNull();
      expect(await store.findByEmail(record.email)).toBeNull();
      await store.create(sampleAppointment({ email: record.email }), []);
    });
  });
}
