import { describe, expect, it } from 'vitest';
import { MAX_UNCOMMITTED_SPAN } from '../shared.ts';
import {
  finishMessage,
  hasSlotFor,
  openWindow,
  rereadFrom,
  startMessage,
  startedAlready,
  stopRunning,
} from './batch-window.ts';

const roomy = { inFlight: 0, maxInFlight: 100, perPartition: 100 };

describe('batch window', () => {
  it('commits only up to the lowest unfinished message, whatever order messages finish in', () => {
    const window = openWindow(10n);
    for (const offset of [10n, 11n, 12n]) startMessage(window, offset);
    expect(window.unfinished).toEqual([10n, 11n, 12n]);
    expect(window.next).toBe(13n);

    // 11 and 12 finish first: 10 is still unfinished, so nothing may be committed yet.
    expect(finishMessage(window, 12n)).toBe(10n);
    window.committed = 10n;
    expect(finishMessage(window, 11n)).toBeNull();
    // 10 finishes: the commit jumps past everything started.
    expect(finishMessage(window, 10n)).toBe(13n);
    expect(window.unfinished).toEqual([]);
  });

  it('never moves the commit back below what was committed', () => {
    const window = openWindow(0n);
    startMessage(window, 0n);
    startMessage(window, 1n);
    window.committed = 5n;
    expect(finishMessage(window, 1n)).toBeNull();
    expect(finishMessage(window, 0n)).toBeNull();
  });

  it('leaves unfinished offsets alone when asked to finish one it does not hold', () => {
    const window = openWindow(0n);
    startMessage(window, 0n);
    startMessage(window, 1n);
    expect(finishMessage(window, 7n)).toBe(0n);
    expect(window.unfinished).toEqual([0n, 1n]);
  });

  it('gives a slot only within maxInFlight, perPartitionConcurrency and the uncommitted span', () => {
    const window = openWindow(0n);
    expect(hasSlotFor(window, 0n, roomy)).toBe(true);
    expect(hasSlotFor(window, 0n, { ...roomy, inFlight: 100 })).toBe(false);

    startMessage(window, 0n);
    startMessage(window, 1n);
    expect(window.running).toBe(2);
    expect(hasSlotFor(window, 2n, { ...roomy, perPartition: 2 })).toBe(false);
    stopRunning(window);
    expect(hasSlotFor(window, 2n, { ...roomy, perPartition: 2 })).toBe(true);

    // Offset 0 still unfinished: a message MAX_UNCOMMITTED_SPAN past it waits.
    const span = BigInt(MAX_UNCOMMITTED_SPAN);
    expect(hasSlotFor(window, span - 1n, roomy)).toBe(true);
    expect(hasSlotFor(window, span, roomy)).toBe(false);
  });

  it('knows what it started, and rereads from its lowest unfinished message', () => {
    const window = openWindow(4n);
    expect(startedAlready(window, 4n)).toBe(false);
    startMessage(window, 4n);
    startMessage(window, 5n);
    expect(startedAlready(window, 5n)).toBe(true);
    expect(startedAlready(window, 6n)).toBe(false);
    finishMessage(window, 4n);
    expect(rereadFrom(window, 9n)).toBe(5n);
    finishMessage(window, 5n);
    expect(rereadFrom(window, 9n)).toBe(9n);
  });
});
