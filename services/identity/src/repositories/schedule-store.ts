/**
 * Runs of periodic work shared by every replica (the moderator digest): a run is claimed by one
 * replica at most once per period.
 */
export interface ScheduleStore {
  /**
   * Claims the run of `name` at `now` if the previous one is at least `everyMs` old (or there was
   * none); answers when the previous run was (now - everyMs for the first), or null when it is
   * not yet time or another replica claimed it.
   */
  claim(name: string, now: Date, everyMs: number): Promise<{ previous: string } | null>;
}
