import { asOneLine, type AppointmentRecipient } from '@portal/contracts';
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

/**
 * What a message says of the appointment, every value a person typed (a name, a place, a note)
 * made one line (asOneLine) and set after words of the portal's own, so that none can start a line
 * of its own: text stored before the fields refused line breaks cannot write a line in the portal's name.
 */
function parts(recipient: AppointmentRecipient) {
  const name = recipient.full_name ? asOneLine(recipient.full_name) : '';
  return {
    greeting: `Hello${name ? ` ${name}` : ''},`,
    when: spokenTime(recipient.start, recipient.time_zone),
    place: asOneLine(recipient.place),
    note: recipient.note ? `Note: ${asOneLine(recipient.note)}` : '',
    // The number that will be called: the box office's when it gave one, else the profile's,
    // spaced for reading as the participant's screens show it.
    number: recipient.call_number ? asOneLine(recipient.call_number_readable ?? recipient.call_number) : null,
  };
}

function opening(job: AppointmentJob, when: string, place: string): string {
  if (job.kind === 'confirmation') return `Your appointment is set: ${when}, at ${place}.`;
  return `A reminder: your appointment is ${when}, at ${place}.`;
}

function awaitCall(number: string | null): string {
  return number
    ? `Stand there and await a phone call on ${number}. Fully charge that phone and bring wired headphones.`
    : 'Stand there and await a phone call on the number you gave at registration. Fully charge your phone and bring wired headphones.';
}

export function appointmentEmail(branding: Branding, job: AppointmentJob, recipient: AppointmentRecipient): EmailContent {
  const { greeting, when, place, note, number } = parts(recipient);
  if (job.kind === 'announcement') {
    const yours = `Your appointment: ${when}, at ${place}.${number ? ` We will call ${number}.` : ''}`;
    return {
      subject: `${branding.productName}: a message about your appointment`,
      text: [greeting, '', `A message from the ${branding.productName} team: ${job.message ?? ''}`, '', yours].join('\n'),
      html: layout(
        branding,
        `<p>${escapeHtml(greeting)}</p>
    <p>A message from the ${escapeHtml(branding.productName)} team: ${escapeHtml(job.message ?? '')}</p>
    <p>${escapeHtml(yours)}</p>`,
      ),
    };
  }
  const first = opening(job, when, place);
  const call = awaitCall(number);
  const link = `${branding.publicUrl}/api/appointments/mine.ics`;
  return {
    subject:
      job.kind === 'confirmation' ? `${branding.productName}: your appointment on ${when}` : `${branding.productName}: reminder — ${when}`,
    text: [greeting, '', first, call, ...(note ? ['', note] : []), '', `Add it to your calendar (signed in): ${link}`].join('\n'),
    html: layout(
      branding,
      `<p>${escapeHtml(greeting)}</p>
    <p>${escapeHtml(first)}</p>
    <p>${escapeHtml(call)}</p>
    ${note ? `<p>${escapeHtml(note)}</p>` : ''}
    <p><a href="${escapeHtml(link)}">Add it to your calendar</a> (signed in)</p>`,
    ),
  };
}

/** A text message: short (one or two SMS segments), no links; it names the number that will be called. */
export function appointmentSms(branding: Branding, job: AppointmentJob, recipient: AppointmentRecipient): string {
  const { when, place, number } = parts(recipient);
  const call = number ? `We will call ${number}.` : 'Await our call on this phone.';
  if (job.kind === 'announcement') return `${branding.productName}: ${job.message ?? ''} ${call}`;
  return `${branding.productName}: ${opening(job, when, place)} ${call}`;
}
