import type { AppointmentDelivery, AppointmentStatus } from '@portal/contracts';
import type { PendingEvent } from './user-repository.js';

/** An appointment as the identity service stores it. */
export interface AppointmentRecord {
  id: string;
  /**
   * The ticket holder's address (lower case): the appointment is an account's while that account
   * has confirmed this address (AppointmentService.holderOf), never by a stored link.
   */
  email: string;
  /** The ticket holder's name as the box office gave it ('' when none): who a pending appointment is for. */
  name: string;
  /** UTC ISO 8601. */
  start: string;
  /** The IANA zone it was set in (EVENT_TIMEZONE). */
  time_zone: string;
  place: string;
  note: string;
  /** The phone number as given by the box office (empty: the account's number is used). */
  phone_input: string;
  /** Grows with every move; reminders are for one version. */
  version: number;
  status: AppointmentStatus;
  status_updated_at: string | null;
  /** What became of its messages (confirmation, reminders, announcements), per key. */
  deliveries: AppointmentDelivery[];
  created_at: string;
  updated_at: string;
}

export class DuplicateAppointmentError extends Error {
  override name = 'DuplicateAppointmentError';
  constructor() {
    super('an appointment exists for this e-mail address');
  }
}

/**
 * The appointment store port (SQLite in all-in-one, MongoDB in the distributed mode). Each write
 * takes the events announcing it and stores them with the change, atomically (the transactional
 * outbox). E-mail addresses are unique regardless of case: one appointment per ticket holder.
 */
export interface AppointmentStore {
  findById(id: string): Promise<AppointmentRecord | null>;
  findByEmail(email: string): Promise<AppointmentRecord | null>;
  /** Appointments starting in [from, to) (UTC ISO 8601), in time order. */
  listBetween(from: string, to: string): Promise<AppointmentRecord[]>;
  /** Throws DuplicateAppointmentError when the address has one. */
  create(record: AppointmentRecord, events: PendingEvent[]): Promise<void>;
  /**
   * Replaces the appointment if it is still at `expectedVersion` (optimistic concurrency: two
   * administrators moving it at once cannot both win); answers false otherwise.
   */
  replace(record: AppointmentRecord, expectedVersion: number, events: PendingEvent[]): Promise<boolean>;
  /** Sets the status of the day; null when it does not exist. */
  setStatus(id: string, status: AppointmentStatus, at: string, events: PendingEvent[]): Promise<AppointmentRecord | null>;
  /**
   * Records what became of one message, if the appointment is still at `version` (a message of an
   * older version is not recorded); replaces an earlier record of the same key. False when stale.
   */
  recordDelivery(id: string, version: number, delivery: AppointmentDelivery): Promise<boolean>;
  /** False when it did not exist. */
  delete(id: string, events: PendingEvent[]): Promise<boolean>;
  ping(): Promise<void>;
}
