import { MemoryUploadSlots } from '../src/uploads/upload-slots.js';
import { uploadSlotsContract } from './contracts/upload-slots-contract.js';

// The Redis adapter runs the same contract in tests/infra/redis-stores.test.ts.
uploadSlotsContract('memory', async () => new MemoryUploadSlots(), { shared: false });
