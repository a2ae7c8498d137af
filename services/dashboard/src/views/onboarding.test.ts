/**
 * The first hour: the key page after a key is made (first request, docs, tier, dates,
 * the danger zone apart, POST-redirect-GET), the "check your inbox" note without SMTP, the demo's
 * videos in the playground, and the favicon.
 */
import { describe, expect, it } from 'vitest';
import { Browserish, buildTestDashboard } from '../../test/support.ts';

const PASSWORD = 'correct horse battery staple';
const DEMO_VIDEOS = [
  { id: 'F1xioXWb8CY', shows: 'manual + auto-generated English subtitles' },
  { id: 'it3OtbTxQk0', shows: 'auto-generated English only' },
];

/** The text inside the element with this id (tags stripped, entities of the snippets decoded). */
function textOf(page: string, id: string): string {
  const match = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</(pre|ul|p|span|code)>`).exec(page);
  if (!match) throw new Error(`no #${id}`);
  return match[1]!
    .replace(/<[^>]+>/g, '')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}

describe('the key page after a new key', () => {
  it('redirects after each action and shows the new key once, with a first request that uses it', async () => {
    const { app, mail, gateway, logs } = await buildTestDashboard({
      PUBLIC_API_URL: 'https://api.example.test',
    });
    const b = new Browserish(app);
    await b.signUpVerified(mail, 'first@example.com', PASSWORD);
    await b.get('/keys');
    const generated = await b.post('/keys/generate', {});
    expect(generated.statusCode).toBe(303);
    expect(generated.headers.location).toBe('/keys');
    const key = [...gateway.keys.values()][0]!;

    const page = (await b.get('/keys')).body;
    expect(textOf(page, 'new-key')).toBe(key);
    const curl = textOf(page, 'first-curl');
    expect(curl).toContain(`curl -s -X POST 'https://api.example.test/api/v1/extract'`);
    expect(curl).toContain(`-H 'X-API-Key: ${key}'`);
    expect(curl).toContain(`-d '{"url":"https://www.youtube.com/watch?v=dQw4w9WgXcQ"}'`);
    expect(textOf(page, 'first-js')).toContain(`'X-API-Key': "${key}"`);
    expect(textOf(page, 'first-python')).toContain(`"X-API-Key": "${key}"`);
    expect(page).toContain('href="https://api.example.test/docs"');
    // Human dates, the instant in the attribute.
    expect(page).toMatch(
      /Created <time datetime="\d{4}-\d\d-\d\dT[\d:.]+Z">\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC<\/time>/,
    );

    // Shown once: the next page has neither the key nor the panel.
    const again = (await b.get('/keys')).body;
    expect(again).not.toContain(key);
    expect(again).not.toContain('id="first-curl"');
    // Regenerate: redirect, then the new key once; revoke: redirect, then the notice once.
    expect((await b.post('/keys/regenerate', { confirm: 'yes' })).headers.location).toBe('/keys');
    const second = [...gateway.keys.values()][0]!;
    expect(textOf((await b.get('/keys')).body, 'first-curl')).toContain(second);
    expect((await b.post('/keys/revoke', { confirm: 'yes' })).statusCode).toBe(303);
    expect((await b.get('/keys')).body).toContain('Your key is revoked.');
    expect((await b.get('/keys')).body).not.toContain('Your key is revoked.');
    for (const secret of [key, second]) expect(logs.join('')).not.toContain(secret);
  });

  it('says what a free tier cannot call (403 TIER_REQUIRED) and how to get more', async () => {
    const { app, mail, gateway } = await buildTestDashboard();
    const b = new Browserish(app);
    await b.signUpVerified(mail, 'tier@example.com', PASSWORD);
    await b.get('/keys');
    await b.post('/keys/generate', {});
    const page = (await b.get('/keys')).body;
    expect(textOf(page, 'key-tier')).toBe('free');
    expect(textOf(page, 'tier-allowed')).toContain('Extract subtitles');
    const refused = textOf(page, 'tier-refused');
    for (const what of ['Summaries', 'Comments', 'Comment analysis', 'Bulk jobs'])
      expect(refused).toContain(what);
    expect(refused).toContain('needs pro or higher');
    expect(page).toContain('<code>403 TIER_REQUIRED</code>');
    expect(textOf(page, 'tier-upgrade')).toContain('higher tier');
    const id = [...gateway.accounts.keys()][0]!;
    gateway.accounts.get(id)!.tier = 'pro';
    const pro = (await b.get('/keys')).body;
    expect(pro).not.toContain('id="tier-refused"');
    expect(pro).toContain('Every operation is included.');
  });

  it('keeps Regenerate and Revoke in their own danger section, after the key and the first request', async () => {
    const { app, mail } = await buildTestDashboard();
    const b = new Browserish(app);
    await b.signUpVerified(mail, 'danger@example.com', PASSWORD);
    await b.get('/keys');
    await b.post('/keys/generate', {});
    const page = (await b.get('/keys')).body;
    const zone = /<section class="card danger-zone"[\s\S]*?<\/section>/.exec(page)?.[0] ?? '';
    expect(zone).toContain('action="/keys/regenerate"');
    expect(zone).toContain('action="/keys/revoke"');
    expect(zone).not.toContain('id="new-key"');
    expect(page.indexOf('danger-zone')).toBeGreaterThan(page.indexOf('id="first-python"'));
    expect(page.match(/action="\/keys\/(regenerate|revoke)"/g)).toHaveLength(2);
  });
});

describe('demo-aware first steps', () => {
  it('says where the mail went when there is no SMTP server', async () => {
    const { app } = await buildTestDashboard({}, { mailsShownIn: 'the console where `npm run demo` runs' });
    const b = new Browserish(app);
    await b.get('/sign-up');
    const res = await b.post('/sign-up', { email: 'demo@example.com', password: PASSWORD });
    expect(res.body).toContain('Check your inbox');
    expect(res.body).toMatch(/id="console-mail"[^]*appears\s+in\s+the console where `npm run demo` runs/);
    await b.get('/forgot');
    expect((await b.post('/forgot', { email: 'demo@example.com' })).body).toContain('id="console-mail"');

    const smtp = await buildTestDashboard({ SMTP_URL: 'smtp://127.0.0.1:1' }, { mailsShownIn: 'anywhere' });
    const c = new Browserish(smtp.app);
    await c.get('/forgot');
    expect((await c.post('/forgot', { email: 'nobody@example.com' })).body).not.toContain(
      'id="console-mail"',
    );
  });

  it('starts the playground on a video the replay has and offers the others', async () => {
    const { app, mail, gateway } = await buildTestDashboard({}, { demoVideos: DEMO_VIDEOS });
    const b = new Browserish(app);
    await b.signUpVerified(mail, 'play@example.com', PASSWORD);
    const page = (await b.get('/playground')).body;
    expect(page).toMatch(/id="url"[^>]*value="https:\/\/www\.youtube\.com\/watch\?v=F1xioXWb8CY"/);
    expect(page).toContain('list="demo-videos"');
    expect(page).toContain(
      '<option value="https://www.youtube.com/watch?v=it3OtbTxQk0">auto-generated English only</option>',
    );
    expect(textOf(page, 'demo-video-list')).toContain('F1xioXWb8CY');
    // The first request uses it too.
    await b.get('/keys');
    await b.post('/keys/generate', {});
    expect(textOf((await b.get('/keys')).body, 'first-curl')).toContain('watch?v=F1xioXWb8CY');
    expect(gateway.keys.size).toBe(1);

    const plain = await buildTestDashboard();
    const c = new Browserish(plain.app);
    await c.signUpVerified(plain.mail, 'plain@example.com', PASSWORD);
    const normal = (await c.get('/playground')).body;
    expect(normal).not.toContain('demo-videos');
    expect(normal).toContain('watch?v=dQw4w9WgXcQ');
  });
});

describe('favicon', () => {
  it('is an SVG at /favicon.ico, linked from every page, and needs no session', async () => {
    const { app } = await buildTestDashboard();
    const icon = await app.inject('/favicon.ico');
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(icon.body).toMatch(/^<svg /);
    expect((await app.inject('/sign-in')).body).toContain(
      '<link rel="icon" href="/favicon.ico" type="image/svg+xml" />',
    );
  });
});
