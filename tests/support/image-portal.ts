import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ServiceLauncher, ServiceName } from './distributed-portal.js';

const run = promisify(execFile);

/** The variables of the test process the services must not inherit inside an image. */
const HOST_ONLY = new Set(['PATH', 'HOME', 'WEB_DIST', 'DATA_DIR']);

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
      return { file: 'buildah', args: ['run', '--isolation', isolation, ...variables, container, '--', 'node', 'main.js'], env: { PATH: process.env.PATH ?? '' } };
    },
    async dispose() {
      for (const container of containers.values()) await run('buildah', ['rm', container]).catch(() => undefined);
      containers.clear();
    },
  };
}
