// Writes docs/openapi.json from the shared zod schemas (run after a build: npm run build).
import { writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from '../packages/contracts/dist/openapi.js';

const target = new URL('../docs/openapi.json', import.meta.url);
writeFileSync(target, `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
console.log(`wrote ${target.pathname.split('/').slice(-2).join('/')}`);
