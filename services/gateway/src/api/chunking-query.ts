import { chunkingSchema } from '@subx/public-api';

/** Playlist's `chunking.max_tokens`, `chunking.overlap_tokens`, `chunking.split`: the members of
 * `chunkingSchema` as query parameters, without their defaults. */
export const chunkingQueryParameters = Object.fromEntries(
  Object.entries(chunkingSchema.properties).map(([name, schema]) => {
    const { default: fallback, ...rest } = schema as { default?: unknown; description?: string };
    return [
      `chunking.${name}`,
      {
        ...rest,
        description: `${rest.description ? `${rest.description} ` : ''}As extract's \`chunking.${name}\` (default ${JSON.stringify(fallback)}); any \`chunking.*\` parameter adds \`chunks\` to every successful item (timed json only).`,
      },
    ];
  }),
);
