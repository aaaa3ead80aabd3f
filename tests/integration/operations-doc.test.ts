import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { MEDIA_QUEUES, TRANSCODE_MEDIA_QUEUE } from '@portal/contracts';
import { FFMPEG_TIME_LIMIT_SECONDS, portalTopics } from '@portal/platform';
import { parseSize } from '../../infra/backup/portal-backup.mjs';

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

  it('lists in "What to watch" exactly the alerts of the PrometheusRule, with their severities', () => {
    const rule = parse(read('k8s/components/prometheus-operator/alerts.yaml')) as {
      spec: { groups: { rules: { alert?: string; labels?: { severity?: string } }[] }[] };
    };
    const alerts = new Map<string, string>();
    for (const group of rule.spec.groups) for (const r of group.rules) if (r.alert) alerts.set(r.alert, r.labels!.severity!);
    const watch = OPERATIONS.slice(OPERATIONS.indexOf('| Alert | Fires when | Severity |'), OPERATIONS.indexOf('\n## Runbook'));
    const documented = new Map([...watch.matchAll(/^\| `(Portal\w+)` \| .* \| (warning|critical) \|$/gm)].map((m) => [m[1]!, m[2]!]));
    expect(documented).toEqual(alerts);
  });

  /** The sizing table's row for a number of participants, as cells. */
  const sizingRow = (participants: string) => {
    const table = OPERATIONS.slice(OPERATIONS.indexOf('| Participants active in the peak hour |'));
    const line = table.split('\n').find((row) => row.startsWith(`| ${participants}`))!;
    return line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
  };
  const number = (cell: string) => Number(/[\d,]+/.exec(cell)![0].replaceAll(',', ''));

  it("holds the festival overlay to the sizing table's worked example: its audio/video workers' ceiling and its per-address limit", () => {
    const overlay = read('k8s/overlays/festival/kustomization.yaml');
    const worked = sizingRow('3,000');
    const [, , , , , workers, , perAddress] = worked;
    // The per-address column: a third of the participants at 30 requests a minute, never below the default.
    const rows = ['100', '500', '1,000', '3,000', '10,000'].map(sizingRow);
    for (const row of rows) expect(number(row[7]!), row[0]).toBe(Math.max(3000, (number(row[0]!) / 3) * 30));
    expect(/RATE_LIMIT_PER_MINUTE, value: "(\d+)"/.exec(overlay)?.[1]).toBe(String(number(perAddress!)));
    const ceiling = Number(
      /name: media-worker \}\n\s+patch: \|-\n\s+- \{ op: replace, path: \/spec\/minReplicas, value: \d+ \}\n\s+- \{ op: replace, path: \/spec\/maxReplicas, value: (\d+) \}/.exec(
        overlay,
      )?.[1],
    );
    expect(ceiling).toBeGreaterThanOrEqual(number(workers!));
    expect(ceiling).toBeLessThanOrEqual(Math.ceil(number(workers!) * 1.5));
    expect(OPERATIONS).toContain(`its audio/video workers go from 4 to ${ceiling}`);
  });

  it("sizes the backups' claim for BACKUP_KEEP copies of the largest festival's databases and the reserve, as it says", () => {
    const docs = parseAllDocuments(read('k8s/components/backup-cronjob/backup.yaml')).map((doc) => doc.toJS() as any);
    const claim = parseSize(docs.find((d) => d.kind === 'PersistentVolumeClaim').spec.resources.requests.storage);
    const container = docs.find((d) => d.kind === 'CronJob').spec.jobTemplate.spec.template.spec.containers[0];
    const env = Object.fromEntries(container.env.map((e: { name: string; value: string }) => [e.name, e.value]));
    const perCopy =
      Number(/about 50 MB for the worked example's 3,000 participants \(18,000\s+items\), (\d+) MB for 10,000/.exec(OPERATIONS)?.[1]) * 1e6;
    expect(perCopy).toBeGreaterThan(0);
    expect(env.BACKUP_OBJECTS).toBe('list');
    expect(claim).toBeGreaterThanOrEqual(Number(env.BACKUP_KEEP) * perCopy + parseSize(env.BACKUP_RESERVE));
    expect(OPERATIONS).toContain(
      `claim's ${docs.find((d) => d.kind === 'PersistentVolumeClaim').spec.resources.requests.storage.replace('Gi', ' Gi')}`,
    );
  });

  it("requests the memory of two ffmpeg runs for the audio/video workers, and the video cap fits ffmpeg's time limit and their grace period", () => {
    const measured = Number(/was measured at ([\d.]+) GB/.exec(OPERATIONS)?.[1]) * 1e9;
    const worker = parse(read('k8s/base/media-worker.yaml')) as {
      spec: { template: { spec: { containers: { resources: { requests: { memory: string } } }[] } } };
    };
    expect(parseSize(worker.spec.template.spec.containers[0]!.resources.requests.memory)).toBeGreaterThanOrEqual(2 * measured);
    expect(read('k8s/overlays/festival/kustomization.yaml')).toMatch(/resources\/requests\/memory, value: 2Gi/);
    expect(OPERATIONS).toContain(`\`MEDIA_MAX_VIDEO_SECONDS\` (${FFMPEG_TIME_LIMIT_SECONDS / 60} minutes by default, and at most that`);
    const grace = Number(
      /terminationGracePeriodSeconds, value: (\d+) \}/.exec(read('k8s/components/media-worker-split/kustomization.yaml'))?.[1],
    );
    expect(grace).toBeGreaterThan(FFMPEG_TIME_LIMIT_SECONDS);
  });

  it('claims no pod-deletion-cost that the portal does not set', () => {
    const manifests = readdirSync(fileURLToPath(new URL('../../k8s/', import.meta.url)), { recursive: true, encoding: 'utf8' })
      .filter((path) => path.endsWith('.yaml'))
      .map((path) => read(`k8s/${path}`));
    expect(manifests.some((text) => text.includes('pod-deletion-cost'))).toBe(false);
    for (const mention of OPERATIONS.matchAll(/pod-deletion-cost/g))
      expect(OPERATIONS.slice(mention.index - 80, mention.index)).toMatch(/sets no/);
  });
});
