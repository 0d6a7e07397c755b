// Runs the whole conformance suite on the memory engine.
import { memoryHarness } from './harness.js';
import { defineAllCases } from './all-cases.js';

defineAllCases(memoryHarness);
