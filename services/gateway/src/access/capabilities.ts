/**
 * What a tier may do, read from the one pricing table: each metered operation (`minimumTier`) and
 * each capability gated inside one (watches, transcription, a translation by a model,
 * embeddings), with the lowest tier that has it and whether a given tier does. GET /api/v1/account
 * and the admin API's account limits (the dashboard's tier panel) answer this one map.
 */
import { tierAllows, type AccessPricing } from '@subx/credits';
import { TIERS, type Tier } from '@subx/credits';

/** Capabilities inside the metered operations, each with its own tier rule. */
export const GATED_CAPABILITIES = ['watches', 'transcription', 'translation_by_model', 'embeddings'] as const;
type GatedCapability = (typeof GATED_CAPABILITIES)[number];

/** Whether `tier` has the capability, by the pricing table. */
function hasCapability(capability: GatedCapability, tier: Tier, pricing: AccessPricing): boolean {
  switch (capability) {
    case 'watches':
      return pricing.watchMax[tier] > 0;
    case 'transcription':
      // `mode` auto or transcribe: Pro and up, and only a tier given some audio (item-charges.ts).
      return tierAllows(tier, 'pro') && pricing.transcribeMaxSeconds[tier] > 0;
    case 'translation_by_model':
    case 'embeddings':
      // Every tier, paid in credits (the deployment must have the model or endpoint configured).
      return true;
  }
}

export interface OperationAccess {
  minimum_tier: Tier;
  allowed: boolean;
}

/**
 * Per metered operation and gated capability: its lowest tier and whether `tier` may use it. A
 * capability no tier has names the highest tier, and `allowed` is false for all.
 */
export function operationAccess(tier: Tier, pricing: AccessPricing): Record<string, OperationAccess> {
  const access: Record<string, OperationAccess> = {};
  for (const [operation, minimum] of Object.entries(pricing.minimumTier))
    access[operation] = { minimum_tier: minimum, allowed: tierAllows(tier, minimum) };
  for (const capability of GATED_CAPABILITIES) {
    const lowest = TIERS.find((t) => hasCapability(capability, t, pricing));
    access[capability] = {
      minimum_tier: lowest ?? TIERS[TIERS.length - 1]!,
      allowed: hasCapability(capability, tier, pricing),
    };
  }
  return access;
}
