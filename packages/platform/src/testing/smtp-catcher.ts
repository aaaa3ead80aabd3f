import { SMTPServer } from 'smtp-server';

export interface SmtpCatcher {
  url: string;
  /** Every message received so far, raw (RFC 822). */
  messages: Buffer[];
  /** The envelope's recipients (RCPT TO) of each message, in the same order. */
  envelopes: string[][];
  close(): Promise<void>;
}

/** A real SMTP server (the smtp-server package) on loopback that keeps what it receives. */
export async function startSmtpCatcher(): Promise<SmtpCatcher> {
  const messages: Buffer[] = [];
  const envelopes: string[][] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        messages.push(Buffer.concat(chunks));
        envelopes.push(session.envelope.rcptTo.map((recipient) => recipient.address));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as { port: number };
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    envelopes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
