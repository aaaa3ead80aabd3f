import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { kafkaTopicsJob } from '../support/image-portal.js';

// The images' smoke (tests/images) creates its Kafka topics by running this Job's command in
// this Job's image, as the cluster would; here, that what it reads is the manifest's own.
describe('the kafka-topics Job of k8s/', () => {
  it("names a service image and a command the image's build holds", () => {
    const job = kafkaTopicsJob();
    expect(['gateway', 'identity', 'evidence', 'media-worker', 'notifier']).toContain(job.service);
    expect(job.command[0]).toBe('node');
    // The images hold the platform's build at the same place as the work tree (WORKDIR /app).
    const script = job.command[1]!;
    expect(script).toMatch(/^packages\/platform\/dist\/cli\/create-kafka-topics\.js$/);
    expect(
      existsSync(
        fileURLToPath(new URL(`../../packages/platform/src/cli/${script.split('/').pop()!.replace(/\.js$/, '.ts')}`, import.meta.url)),
      ),
    ).toBe(true);
  });

  it('refuses a manifest it cannot read, rather than running nothing', () => {
    expect(() => kafkaTopicsJob('kind: Job\n')).toThrow(/kafka-topics.yaml/);
    expect(kafkaTopicsJob('  image: portal-notifier\n  command: [node, a.js, --x]\n')).toEqual({
      service: 'notifier',
      command: ['node', 'a.js', '--x'],
    });
  });
});
