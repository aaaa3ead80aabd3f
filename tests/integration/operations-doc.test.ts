import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { MEDIA_QUEUES, TRANSCODE_MEDIA_QUEUE } from '@portal/contracts';
import { portalTopics } from '@portal/platform';

// docs/OPERATIONS.md and the manifests of k8s/ against the code they describe.
const read = (path: string) => readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8');
const OPERATIONS = read('docs/OPERATIONS.md');
/** The namespace the services use when DEPLOYMENT_NAMESPACE is unset. */
const NAMESPACE = 'portal';

describe('docs/OPERATIONS.md', () => {
  it('lists for Strimzi exactly the Kafka topics the kafka-topics Job makes (portalTopics())', () => {
    const list = OPERATIONS.slice(OPERATIONS.indexOf('<!-- kafka-topics:begin -->'), OPERATIONS.indexOf('<!-- kafka-topics:end -->'));
    const documented = [...list.matchAll(/`([a-z0-9.-]+)`/g)].map((match) => match[1]!);
    expect(documented.sort()).toEqual(
      portalTopics()
        .map((topic) => `${NAMESPACE}.${topic}`)
        .sort(),
    );
    // The Job does not list topics of its own: it runs the command that makes portalTopics().
    const job = parse(read('k8s/base/kafka-topics.yaml')) as { spec: { template: { spec: { containers: { command: string[] }[] } } } };
    expect(job.spec.template.spec.containers[0]!.command).toEqual(['node', 'packages/platform/dist/cli/create-kafka-topics.js']);
  });

  it('states the minimum Kubernetes version that the preStop sleep of the base needs', () => {
    expect(read('k8s/base/gateway.yaml')).toMatch(/preStop: \{ sleep:/);
    expect(OPERATIONS).toMatch(/Kubernetes \*\*1\.30 or later\*\*/);
  });

  it('names the KEDA lists the components scale on as the BullMQ waiting lists of the media queues', () => {
    const lists = ['k8s/components/keda-media-worker/scaled-object.yaml', 'k8s/components/media-worker-split/scaled-objects.yaml'].flatMap(
      (path) =>
        parseAllDocuments(read(path)).flatMap((doc) => {
          const object = doc.toJS() as { spec: { triggers: { type: string; metadata: { listName?: string } }[] } };
          return object.spec.triggers.filter((t) => t.type === 'redis').map((t) => t.metadata.listName!);
        }),
    );
    const waiting = [...Object.values(MEDIA_QUEUES), TRANSCODE_MEDIA_QUEUE].map((queue) => `${NAMESPACE}:${queue}:wait`);
    expect(new Set(lists)).toEqual(new Set(waiting));
    for (const list of waiting) expect(OPERATIONS).toContain(`\`${list}\``);
  });

  it('describes every component of k8s/components in its table', () => {
    const components = readdirSync(fileURLToPath(new URL('../../k8s/components/', import.meta.url)));
    expect(components.length).toBeGreaterThanOrEqual(6);
    for (const component of components) expect(OPERATIONS).toContain(`| \`${component}\` |`);
  });
});
