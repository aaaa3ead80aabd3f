import type { PublicConfig } from '@portal/contracts';

export interface FaqEntry {
  question: string;
  answer: string;
}

/** The signed-in participant's own appointment, as the help page words it (one truth with the home page). */
export interface OwnAppointment {
  /** Its date and time in words, in the event's time zone. */
  when: string;
  /** Its place; empty when the box office gave none (the event's street corner then). */
  place: string;
  /** The number that will be called, spaced for reading; null when there is none. */
  number: string | null;
}

/**
 * The questions of the help page (SPEC section 2), worded with this event's configuration; for a
 * participant with an appointment, the time, the place and the number are that appointment's.
 */
export function faqFor(config: PublicConfig, own: OwnAppointment | null = null): FaqEntry[] {
  const place = own?.place || config.streetCorner;
  const number = own?.number ?? 'the number you gave when you registered';
  return [
    {
      question: 'When is my appointment?',
      answer: own
        ? `Your appointment is on ${own.when}, and we send you text reminders before it. Please arrive ${config.arriveEarly}.`
        : 'Your appointment date and time are in the confirmation email you received for your ticket, and we send you text reminders before it. Please arrive ' +
          `${config.arriveEarly}.`,
    },
    {
      question: 'Where do I meet?',
      answer: `Stand at ${place} and wait for a phone call on ${number}.`,
    },
    {
      question: 'What if the weather is bad?',
      answer: `In bad weather, wait in ${config.libraryEntryway}. The call will still reach you there.`,
    },
    {
      question: 'What if my call drops?',
      answer:
        'Stay where you are and keep your phone at hand: we will call you back on the same number. Make sure your phone is fully charged and your wired headphones are plugged in.',
    },
    {
      question: 'Is there any payment?',
      answer:
        'No. Informants are not paid for their contributions, and nobody from the investigation will ask you for money or payment details beyond your ticket.',
    },
    {
      question: 'How do I upload evidence?',
      answer:
        'Open the menu icon at the top right and choose Evidence. Press the red plus button, pick a note, a photo or video, or a sound recording, then add a title and notes and press Upload Evidence. Stay on the screen until the upload has finished.',
    },
  ];
}
