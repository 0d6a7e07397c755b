// Runs the whole conformance suite on the PostgreSQL engine (a fresh schema per case).
import { after } from 'node:test';
import { closeTestDatabase } from '../support/database.js';
import { postgresHarness } from './harness.js';
import { defineAllCases } from './all-cases.js';

defineAllCases(postgresHarness('postgres'));
after(closeTestDatabase);
