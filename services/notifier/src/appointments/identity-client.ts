import { appointmentRecipientSchema, type AppointmentRecipient, type DeliveryReport } from '@portal/contracts';
import { DependencyUnavailableError, SERVICE_TOKEN_HEADER, ServiceTokenSource, type IdentityTokens } from '@portal/platform';

/** An answer of identity's that says it cannot serve now (its database away, a restart). */
function unavailable(status: number, what: string): Error {
  const message = `identity answered ${status} ${what}`;
  return status >= 500 || status === 429 ? new DependencyUnavailableError('identity', message) : new Error(message);
}

/** What the notifier asks identity about appointments (its /internal routes, with a service token). */
export interface AppointmentDirectory {
  /** The appointment as it is now, with its participant's address and number; null when it is gone. */
  recipient(appointmentId: string): Promise<AppointmentRecipient | null>;
  /** Records what became of a message; false when the appointment moved on (stale). */
  report(appointmentId: string, report: DeliveryReport): Promise<boolean>;
}

export class HttpAppointmentDirectory implements AppointmentDirectory {
  private readonly token: ServiceTokenSource;

  constructor(
    private readonly baseUrl: string,
    tokens: IdentityTokens,
  ) {
    this.token = new ServiceTokenSource(tokens, 'notifier');
  }

  async recipient(appointmentId: string): Promise<AppointmentRecipient | null> {
    const response = await fetch(new URL(`/internal/appointments/${encodeURIComponent(appointmentId)}/recipient`, this.baseUrl), {
      headers: { [SERVICE_TOKEN_HEADER]: await this.token.get() },
    });
    if (response.status === 404) {
      await response.body?.cancel();
      return null;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw unavailable(response.status, 'for an appointment');
    }
    return appointmentRecipientSchema.parse(await response.json());
  }

  async report(appointmentId: string, report: DeliveryReport): Promise<boolean> {
    const response = await fetch(new URL(`/internal/appointments/${encodeURIComponent(appointmentId)}/deliveries`, this.baseUrl), {
      method: 'POST',
      headers: { [SERVICE_TOKEN_HEADER]: await this.token.get(), 'content-type': 'application/json' },
      body: JSON.stringify(report),
    });
    if (response.status === 404) {
      await response.body?.cancel();
      return false;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw unavailable(response.status, 'to a delivery report');
    }
    return ((await response.json()) as { recorded: boolean }).recorded;
  }
}
