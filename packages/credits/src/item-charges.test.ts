import { describe, expect, it } from 'vitest';
import { DEFAULT_PRICING } from './pricing.ts';
import { DURATION_LOOKUPS_IN_FLIGHT, itemCharges } from './item-charges.ts';

describe('itemCharges', () => {
  it('asks each distinct video its duration once, a bounded number at a time, and prices every item', async () => {
    const ids = Array.from({ length: 200 }, (_, i) => `video${String(i).padStart(6, '0')}`);
    let inFlight = 0;
    let most = 0;
    const asked: string[] = [];
    const charges = await itemCharges(
      [...ids, ids[0]!, null],
      { translate: false, mode: 'auto' },
      DEFAULT_PRICING,
      async (id) => {
        asked.push(id);
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 1));
        inFlight -= 1;
        if (id === ids[1]) throw new Error('no duration');
        return 125;
      },
    );
    expect(asked.sort()).toEqual([...ids].sort());
    expect(most).toBe(DURATION_LOOKUPS_IN_FLIGHT);
    // 1 for the item and 3 started minutes of 125 s; one minute where the duration is unknown;
    // the repeated URL priced like its first; the non-video free.
    expect(charges.reserved[0]).toBe(1 + 3);
    expect(charges.reserved[1]).toBe(1 + 1);
    expect(charges.reserved[200]).toBe(1 + 3);
    expect(charges.reserved[201]).toBe(0);
    expect(charges.total).toBe(199 * 4 + 2 + 4);
  });
});
