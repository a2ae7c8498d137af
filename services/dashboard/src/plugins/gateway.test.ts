import { describe, expect, it } from 'vitest';
import { Browserish, buildTestDashboard } from '../../test/support.ts';

describe('request.gateway', () => {
  it('passes the request id to every gateway call, so both services log one id', async () => {
    const dash = await buildTestDashboard();
    const browser = new Browserish(dash.app);
    await browser.signUpVerified(dash.mail, 'ids@example.com', 'correct horse battery');
    // Confirming created the account, revoked its first key and made the person its owner: three
    // calls under the /verify POST.
    const verifyLine = dash.logs
      .map(
        (line) => JSON.parse(line) as { msg?: string; path?: string; method?: string; request_id?: string },
      )
      .find((line) => line.msg === 'request' && line.path === '/verify' && line.method === 'POST');
    const signInLine = dash.logs
      .map(
        (line) => JSON.parse(line) as { msg?: string; path?: string; method?: string; request_id?: string },
      )
      .find((line) => line.msg === 'request' && line.path === '/sign-in' && line.method === 'POST');
    expect(verifyLine?.request_id).toMatch(/^req_[0-9a-f-]{36}$/);
    // Then the sign-in reported itself to the account's audit log: one call under the /sign-in POST.
    expect(dash.gateway.requestIds).toEqual([
      verifyLine!.request_id,
      verifyLine!.request_id,
      verifyLine!.request_id,
      signInLine!.request_id,
    ]);

    // A caller's (a proxy's) well-formed id is kept and passed on; a malformed one is replaced.
    await browser.get('/keys', { 'x-request-id': 'edge-proxy-0001' });
    expect(dash.gateway.requestIds.at(-1)).toBe('edge-proxy-0001');
    await browser.get('/keys', { 'x-request-id': 'bad id\r\nx' });
    expect(dash.gateway.requestIds.at(-1)).toMatch(/^req_/);
  });
});
