import { createHmac, hkdfSync, randomInt, timingSafeEqual } from 'node:crypto';
import {
  MESSAGES,
  RESET_CODE_MAX,
  RESET_CODE_MIN,
  TOPICS,
  type AccountNoticeData,
  type PasswordResetRequestedData,
  type SessionsRevokedData,
} from '@portal/contracts';
import {
  badRequest,
  checkingSecrets,
  createEvent,
  notFound,
  signingSecret,
  type Logger,
  type SealedBox,
  type SharedSecret,
} from '@portal/platform';
import type { PasswordHasher } from './passwords.js';
import type { SessionService } from './session-service.js';
import type { ResetCodeStore, UserRepository } from '../repositories/user-repository.js';
import type { UserRecord } from './user-record.js';

export interface PasswordResetDeps {
  users: UserRepository;
  codes: ResetCodeStore;
  sessions: SessionService;
  passwords: PasswordHasher;
  sealer: SealedBox;
  /**
   * The services' shared secret; the code hashes are keyed with a key derived from it (the
   * current one's; a code made before a rotation, under the previous one's, still counts).
   */
  secret: string | SharedSecret;
  codeTtlMs: number;
  maxAttempts: number;
  clock: () => number;
  logger: Logger;
  onEventsCommitted: () => void;
}

/**
 * Password reset by e-mailed code. The server makes every code (six digits from a CSPRNG), keeps
 * only a keyed hash of it, lets it live codeTtlMs, and kills it after maxAttempts wrong tries. A
 * code sent by a client is never used. Changing the password ends every session of the account.
 */
export class PasswordResetService {
  private readonly hashKey: Buffer;
  private readonly hashKeys: Buffer[];

  constructor(private readonly deps: PasswordResetDeps) {
    const derive = (text: string) => Buffer.from(hkdfSync('sha256', text, Buffer.alloc(0), 'portal-reset-codes', 32));
    this.hashKey = derive(signingSecret(deps.secret));
    this.hashKeys = checkingSecrets(deps.secret).map(derive);
  }

  async emailExists(email: string): Promise<boolean> {
    return (await this.deps.users.findByEmail(email)) !== null;
  }

  /** Makes a new code (replacing any earlier one) and has the notifier e-mail it. */
  async sendCode(email: string): Promise<void> {
    const user = await this.deps.users.findByEmail(email);
    if (!user) throw notFound(MESSAGES.noAccountForEmail);
    const code = String(randomInt(RESET_CODE_MIN, RESET_CODE_MAX + 1));
    const expiresAt = this.deps.clock() + this.deps.codeTtlMs;
    await this.deps.codes.put({ userId: user.id, codeHash: this.hash(user.id, code), expiresAt, attemptsLeft: this.deps.maxAttempts });
    const data: PasswordResetRequestedData = {
      userId: user.id,
      email: user.email,
      username: user.username,
      full_name: user.full_name,
      sealedCode: this.deps.sealer.seal(code),
      expiresAt: new Date(expiresAt).toISOString(),
    };
    await this.deps.users.appendEvents([
      { topic: TOPICS.passwordResets, event: createEvent({ type: 'password-reset.requested', key: user.id, data }) },
    ]);
    this.deps.onEventsCommitted();
    this.deps.logger.info({ userId: user.id }, 'password reset code issued');
  }

  /** Whether the code is the live one; a wrong code spends one of the attempts. */
  async checkCode(email: string, code: string): Promise<boolean> {
    const user = await this.deps.users.findByEmail(email);
    if (!user) return false;
    return this.consume(user, code, { keepOnSuccess: true });
  }

  async updatePassword(email: string, code: string, password: string): Promise<void> {
    const user = await this.deps.users.findByEmail(email);
    if (!user || !(await this.consume(user, code, { keepOnSuccess: false }))) {
      throw badRequest(MESSAGES.incorrectCode, { code: MESSAGES.incorrectCode });
    }
    const revoked: SessionsRevokedData = { userId: user.id, sessionIds: null, reason: 'password-changed' };
    // The owner hears of it at the account's address, whoever changed it.
    const notice: AccountNoticeData = { notice: 'password-changed', userId: user.id, email: user.email, full_name: user.full_name };
    await this.deps.users.update(
      user.id,
      { password_hash: await this.deps.passwords.hash(password), updated_at: new Date().toISOString() },
      [
        { topic: TOPICS.sessions, event: createEvent({ type: 'sessions.revoked', key: user.id, data: revoked }) },
        { topic: TOPICS.users, event: createEvent({ type: 'account.notice', key: user.id, data: notice }) },
      ],
    );
    const ended = await this.deps.sessions.endAllFor(user.id);
    this.deps.onEventsCommitted();
    this.deps.logger.info({ userId: user.id, sessionsEnded: ended.length }, 'password changed by reset code');
  }

  /**
   * The attempt is taken before the guess is compared (one atomic step in the store), so that
   * however many guesses arrive at once, at most maxAttempts of them are ever compared.
   */
  private async consume(user: UserRecord, code: string, { keepOnSuccess }: { keepOnSuccess: boolean }): Promise<boolean> {
    const record = await this.deps.codes.takeAttempt(user.id, this.deps.clock());
    if (!record) {
      // None, expired or used up: whatever is left of it goes.
      await this.deps.codes.delete(user.id);
      return false;
    }
    const expected = Buffer.from(record.codeHash, 'hex');
    const matches = this.hashKeys.some((key) => {
      const actual = Buffer.from(this.hash(user.id, code, key), 'hex');
      return expected.length === actual.length && timingSafeEqual(expected, actual);
    });
    if (matches) {
      if (keepOnSuccess) await this.deps.codes.returnAttempt(user.id);
      else await this.deps.codes.delete(user.id);
      return true;
    }
    if (record.attemptsLeft <= 0) await this.deps.codes.delete(user.id);
    return false;
  }

  private hash(userId: string, code: string, key = this.hashKey): string {
    return createHmac('sha256', key).update(`${userId}:${code}`).digest('hex');
  }
}
