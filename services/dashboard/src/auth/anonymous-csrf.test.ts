import { describe, expect, it } from 'vitest';
import { createAnonymousCsrf } from './anonymous-csrf.ts';

const OLD = 'old-admin-token-0123456789abcdefghij';
const NEW = 'new-admin-token-0123456789abcdefghij';

describe('anonymous CSRF tokens across an admin token rotation', () => {
  it('accept forms signed under the previous token while it is set, and only then', () => {
    const before = createAnonymousCsrf(OLD);
    const during = createAnonymousCsrf(NEW, OLD);
    const after = createAnonymousCsrf(NEW);
    const openForm = before.mint();
    expect(during.isSigned(openForm)).toBe(true);
    expect(during.matches(openForm, openForm)).toBe(true);
    expect(after.isSigned(openForm)).toBe(false);
    const fresh = during.mint();
    expect(after.isSigned(fresh)).toBe(true);
    expect(before.isSigned(fresh)).toBe(false);
    expect(createAnonymousCsrf('another-token-0123456789abcdefghijk', OLD).isSigned(fresh)).toBe(false);
  });
});
