import { MemoryAdmissionLedger } from '../src/repositories/upload-admissions.js';
import { admissionLedgerContract } from './contracts/admission-ledger-contract.js';

// The Redis adapter runs the same contract in tests/infra/evidence-upload-admissions.test.ts.
admissionLedgerContract('memory', async () => new MemoryAdmissionLedger(), { shared: false });
