import { describeDocumentStoreContract } from './contract.ts';
import { createInMemoryDocumentStore } from './in-memory.ts';

describeDocumentStoreContract('in-memory', async () => createInMemoryDocumentStore());
