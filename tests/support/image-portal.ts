import { execFile, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { ServiceLauncher, ServiceName } from './distributed-portal.js';

const run = promisify(execFile);

/** The variables of the test process the services must not inherit inside an image. */
const HOST_ONLY = new Set(['PATH', 'HOME', 'WEB_DIST', 'DATA_DIR']);

const KAFKA_TOPICS_JOB = fileURLToPath(new URL('../../k8s/base/kafka-topics.yaml', import.meta.url));

/** The image (portal-<service>) and command of k8s/base/kafka-topics.yaml's container, read from the manifest itself. */
export function kafkaTopicsJob(manifest = readFileSync(KAFKA_TOPICS_JOB, 'utf8')): { service: ServiceName; command: string[] } {
  const image = /^\s*image: portal-([\w-]+)\s*$/m.exec(manifest)?.[1];
  const command = /^\s*command: \[([^\]]+)\]\s*$/m.exec(manifest)?.[1];
  if (!image || !command) throw new Error('k8s/base/kafka-topics.yaml: no `image: portal-<service>` or `command: [...]` line');
  return { service: image as ServiceName, command: command.split(',').map((part) => part.trim()) };
}

/** The processes below `root`, by reading /proc. */
function descendants(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const [pid, ppid] of parents) {
      if (ppid !== parent) continue;
      found.push(pid);
      queue.push(pid);
    }
  }
  return found;
}

/** The service's own Node process inside `buildah run` (argv: node main.js). */
function serviceProcess(root: number): number | null {
  for (const pid of descendants(root)) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (/(^|\/)node$/.test(argv[0] ?? '') && argv[1] === 'main.js') return pid;
    } catch {
      // gone meanwhile
    }
  }
  return null;
}

/**
 * Runs each service from its container image (localhost/portal-<service>:<tag>, built by
 * infra/images/build.sh) with buildah: the image's own file system, user, working folder and
 * command (`node main.js`), on the host's network. Nothing of the work tree is used.
 */
export function imageLauncher(tag: string, isolation = process.env.BUILDAH_ISOLATION ?? 'chroot'): ServiceLauncher {
  const containers = new Map<ServiceName, string>();
  return {
    check() {
      if (!tag) throw new Error('no image tag: set PORTAL_IMAGE_TAG (infra/images/build.sh does)');
    },
    async command(service, env) {
      let container = containers.get(service);
      if (!container) {
        const image = `localhost/portal-${service}:${tag}`;
        container = (await run('buildah', ['from', '--pull=never', '--quiet', image])).stdout.trim();
        containers.set(service, container);
      }
      const variables = Object.entries(env)
        .filter(([name]) => !HOST_ONLY.has(name))
        .flatMap(([name, value]) => ['--env', `${name}=${value}`]);
      // Each service keeps its scratch data inside its container.
      variables.push('--env', `DATA_DIR=/tmp/portal-${service}`);
      return {
        file: 'buildah',
        args: ['run', '--isolation', isolation, ...variables, container, '--', 'node', 'main.js'],
        env: { PATH: process.env.PATH ?? '' },
        // A process group of its own, so that a crash (SIGKILL) takes the whole `buildah run`.
        detached: true,
      };
    },
    // `buildah run` answers SIGTERM by killing the command outright: a graceful stop goes to the
    // service's process itself, and `buildah run` ends when it does.
    signal(child: ChildProcess, signal: NodeJS.Signals) {
      if (!child.pid) return;
      try {
        if (signal === 'SIGKILL') process.kill(-child.pid, 'SIGKILL');
        else process.kill(serviceProcess(child.pid) ?? child.pid, signal);
      } catch {
        // already gone
      }
    },
    async dispose() {
      for (const container of containers.values()) await run('buildah', ['rm', container]).catch(() => undefined);
      containers.clear();
    },
    // The kafka-topics Job of k8s/: its command, in its image, as it would run in the cluster.
    async createTopics(env) {
      const job = kafkaTopicsJob();
      const container = (await run('buildah', ['from', '--pull=never', '--quiet', `localhost/portal-${job.service}:${tag}`])).stdout.trim();
      try {
        const variables = Object.entries(env).flatMap(([name, value]) => ['--env', `${name}=${value}`]);
        await run('buildah', ['run', '--isolation', isolation, ...variables, container, '--', ...job.command], { timeout: 120_000 });
      } finally {
        await run('buildah', ['rm', container]).catch(() => undefined);
      }
    },
  };
}
