import type { VERIFICATION_REASONS } from '@portal/contracts';

export interface EmailContent {
  subject: string;
  text: string;
  html: string;
}

export interface Branding {
  productName: string;
  publicUrl: string;
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);
}

export function layout(branding: Branding, bodyHtml: string): string {
  return `<!doctype html>
<html lang="en">
<body style="margin:0;padding:24px;background:#f4f4f6;font-family:Helvetica,Arial,sans-serif;color:#1b1f2a">
  <div style="max-width:520px;margin:0 auto;background:#ffffff;border-radius:8px;padding:24px">
    <h1 style="font-size:20px;margin:0 0 16px">${escapeHtml(branding.productName)}</h1>
    ${bodyHtml}
    <p style="font-size:12px;color:#6b7280;margin-top:24px">${escapeHtml(branding.publicUrl)}</p>
  </div>
</body>
</html>`;
}

export function resetCodeEmail(
  branding: Branding,
  input: { fullName: string; email: string; code: string; minutes: number },
): EmailContent {
  const minutes = `${input.minutes} minute${input.minutes === 1 ? '' : 's'}`;
  // The code stays out of the subject: subjects show on locked phone screens.
  const link = `${branding.publicUrl}/reset-password-code?email=${encodeURIComponent(input.email)}`;
  return {
    subject: `Your ${branding.productName} password reset code`,
    text: [
      `Hello ${input.fullName},`,
      '',
      `Your code to reset your ${branding.productName} password is: ${input.code}`,
      '',
      `It works for ${minutes}. If you did not ask for it, ignore this e-mail: your password stays as it is.`,
      '',
      `Reset your password: ${link}`,
    ].join('\n'),
    html: layout(
      branding,
      `<p>Hello ${escapeHtml(input.fullName)},</p>
    <p>Your code to reset your password is:</p>
    <p style="font-size:32px;letter-spacing:6px;font-weight:bold;margin:16px 0">${escapeHtml(input.code)}</p>
    <p>It works for ${minutes}. If you did not ask for it, ignore this e-mail: your password stays as it is.</p>
    <p><a href="${escapeHtml(link)}">Reset your password</a></p>`,
    ),
  };
}

export function verificationEmail(
  branding: Branding,
  input: { fullName: string; link: string; reason: (typeof VERIFICATION_REASONS)[number] },
): EmailContent {
  const opening = {
    registered: `Thank you for registering as an informant with ${branding.productName}.`,
    'email-changed': `You changed the e-mail address of your ${branding.productName} account.`,
    resent: `You asked for a new link to confirm the e-mail address of your ${branding.productName} account.`,
  }[input.reason];
  return {
    subject: `Confirm your e-mail address for ${branding.productName}`,
    text: [
      `Hello ${input.fullName},`,
      '',
      opening,
      'Please confirm this e-mail address by opening the link below:',
      '',
      input.link,
      '',
      'The link works for 7 days. If this was not you, ignore this e-mail.',
    ].join('\n'),
    html: layout(
      branding,
      `<p>Hello ${escapeHtml(input.fullName)},</p>
    <p>${escapeHtml(opening)} Please confirm this e-mail address:</p>
    <p style="margin:24px 0"><a href="${escapeHtml(input.link)}" style="background:#b71c1c;color:#ffffff;padding:12px 20px;border-radius:6px;text-decoration:none">Confirm my e-mail address</a></p>
    <p style="font-size:13px">Or open this link: <a href="${escapeHtml(input.link)}">${escapeHtml(input.link)}</a></p>
    <p>The link works for 7 days. If this was not you, ignore this e-mail.</p>`,
    ),
  };
}

/** The moderator digest: what came into the review queue since the previous one, by kind, and the queue's address. */
export function moderationDigestEmail(
  branding: Branding,
  input: { fullName: string; counts: { notes: number; photos: number; videos: number; audio: number } },
): EmailContent {
  const { notes, photos, videos, audio } = input.counts;
  const total = notes + photos + videos + audio;
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  const lines = [
    plural(photos, 'photo', 'photos'),
    plural(videos, 'video', 'videos'),
    plural(audio, 'audio recording', 'audio recordings'),
    plural(notes, 'note', 'notes'),
  ];
  const link = `${branding.publicUrl}/admin`;
  return {
    subject: `${plural(total, 'new item', 'new items')} to review in ${branding.productName}`,
    text: [
      `Hello ${input.fullName},`,
      '',
      `${plural(total, 'new item', 'new items')} came into the review queue since the last digest (posted, or changed by their authors):`,
      '',
      ...lines.map((line) => `- ${line}`),
      '',
      `Review them: ${link}`,
    ].join('\n'),
    html: layout(
      branding,
      `<p>Hello ${escapeHtml(input.fullName)},</p>
    <p>${plural(total, 'new item', 'new items')} came into the review queue since the last digest (posted, or changed by their authors):</p>
    <ul>${lines.map((line) => `<li>${escapeHtml(line)}</li>`).join('')}</ul>
    <p style="margin:24px 0"><a href="${escapeHtml(link)}" style="background:#b71c1c;color:#ffffff;padding:12px 20px;border-radius:6px;text-decoration:none">Open the review queue</a></p>`,
    ),
  };
}

/**
 * Tells the owner that the account's e-mail address (sent to the old address) or its password
 * changed, and what to do if it was not them. It carries no secret and no link that acts.
 */
export function accountNoticeEmail(
  branding: Branding,
  input: { fullName: string; notice: 'email-changed' | 'password-changed'; newEmail?: string | undefined },
): EmailContent {
  const resetLink = `${branding.publicUrl}/reset-password-email`;
  const what =
    input.notice === 'email-changed'
      ? `The e-mail address of your ${branding.productName} account was changed to ${input.newEmail ?? 'another address'}. E-mail about the account, password reset codes included, now goes there.`
      : `Your password was changed. Every device signed in to your ${branding.productName} account has been signed out.`;
  const ifNotYou =
    input.notice === 'email-changed'
      ? 'If this was not you, tell the festival staff at once: someone else may be using your account.'
      : `If this was not you, reset your password now (${resetLink}) and tell the festival staff.`;
  return {
    subject:
      input.notice === 'email-changed'
        ? `Your ${branding.productName} e-mail address was changed`
        : `Your ${branding.productName} password was changed`,
    text: [`Hello ${input.fullName},`, '', what, '', ifNotYou].join('\n'),
    html: layout(
      branding,
      `<p>Hello ${escapeHtml(input.fullName)},</p>
    <p>${escapeHtml(what)}</p>
    <p>${
      input.notice === 'email-changed'
        ? escapeHtml(ifNotYou)
        : `If this was not you, <a href="${escapeHtml(resetLink)}">reset your password now</a> and tell the festival staff.`
    }</p>`,
    ),
  };
}
