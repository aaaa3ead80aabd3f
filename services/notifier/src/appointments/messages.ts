import type { AppointmentRecipient } from '@portal/contracts';
import { escapeHtml, layout, type Branding, type EmailContent } from '../emails/templates.js';
import type { AppointmentJob } from './appointment-job.js';

/** "Wednesday, 1 July 2026 at 18:30 (GMT+2)" in the appointment's zone (Intl, which knows IANA zones). */
export function spokenTime(utc: string, zone: string): string {
  const format = new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hour12: false,
    timeZoneName: 'short',
  });
  const parts = Object.fromEntries(format.formatToParts(new Date(utc)).map((part) => [part.type, part.value]));
  return `${parts.weekday}, ${parts.day} ${parts.month} ${parts.year} at ${parts.hour}:${parts.minute} (${parts.timeZoneName})`;
}

function opening(job: AppointmentJob, when: string, place: string): string {
  if (job.kind === 'confirmation') return `Your appointment is set: ${when}, at ${place}.`;
  return `A reminder: your appointment is ${when}, at ${place}.`;
}

export function appointmentEmail(branding: Branding, job: AppointmentJob, recipient: AppointmentRecipient): EmailContent {
  const greeting = `Hello${recipient.full_name ? ` ${recipient.full_name}` : ''},`;
  if (job.kind === 'announcement') {
    return {
      subject: `${branding.productName}: a message about your appointment`,
      text: [greeting, '', job.message ?? '', '', `Your appointment: ${spokenTime(recipient.start, recipient.time_zone)}.`].join('\n'),
      html: layout(
        branding,
        `<p>${escapeHtml(greeting)}</p>
    <p>${escapeHtml(job.message ?? '')}</p>
    <p>Your appointment: ${escapeHtml(spokenTime(recipient.start, recipient.time_zone))}.</p>`,
      ),
    };
  }
  const when = spokenTime(recipient.start, recipient.time_zone);
  const first = opening(job, when, recipient.place);
  const call =
    'Stand there and await a phone call on the number you gave at registration. Fully charge your phone and bring wired headphones.';
  const link = `${branding.publicUrl}/api/appointments/mine.ics`;
  return {
    subject:
      job.kind === 'confirmation' ? `${branding.productName}: your appointment on ${when}` : `${branding.productName}: reminder — ${when}`,
    text: [
      greeting,
      '',
      first,
      call,
      ...(recipient.note ? ['', recipient.note] : []),
      '',
      `Add it to your calendar (signed in): ${link}`,
    ].join('\n'),
    html: layout(
      branding,
      `<p>${escapeHtml(greeting)}</p>
    <p>${escapeHtml(first)}</p>
    <p>${escapeHtml(call)}</p>
    ${recipient.note ? `<p>${escapeHtml(recipient.note)}</p>` : ''}
    <p><a href="${escapeHtml(link)}">Add it to your calendar</a> (signed in)</p>`,
    ),
  };
}

/** A text message: short (one or two SMS segments), no links. */
export function appointmentSms(branding: Branding, job: AppointmentJob, recipient: AppointmentRecipient): string {
  if (job.kind === 'announcement') return `${branding.productName}: ${job.message ?? ''}`;
  const when = spokenTime(recipient.start, recipient.time_zone);
  return `${branding.productName}: ${opening(job, when, recipient.place)} Await our call on this phone.`;
}
