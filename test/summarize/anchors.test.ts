import { describe, expect, it } from 'vitest';
import { anchorIndex, appearsIn, extractAnchors, numberKey } from '../../src/summarize/index.js';

/** `kind:text` (and `=>key` when the key differs), the way docs/scores.md lists them. */
const show = (text: string) => extractAnchors(text).map((a) => `${a.kind}:${a.text}${a.key !== a.text ? `=>${a.key}` : ''}`);

describe('extractAnchors: what counts (docs/scores.md, "What is an anchor")', () => {
  it.each([
    ['numbers with separators, decimals, percent and units', 'Processed 12,345 rows in 1.50s (42%), took 120ms; 1_000_000 ops', ['number:12,345=>12345', 'number:1.50=>1.5', 'number:42', 'number:120', 'number:1_000_000=>1000000']],
    ['a lone digit is not an anchor; a signed number after a space or = is', 'retry 3 of 5, value=-42, delta -5', ['number:-42']],
    ['ranges and comma lists give each number', 'lines 120-180, ports 8080,8081', ['number:120', 'number:180', 'number:8080', 'number:8081']],
    ['dates and times with seconds', 'at 2026-12-05T18:27:42Z and 09:15:03.120', ['time:2026-12-05T18:27:42Z', 'time:09:15:03.120']],
    ['a URL without the sentence dot; its numbers are not numbers', 'GET https://API.example.com/v1/users?id=70. then', ['url:https://API.example.com/v1/users?id=70=>https://api.example.com/v1/users?id=70']],
    ['an IPv4 address with its port', 'listening on 192.168.0.1:8080', ['address:192.168.0.1:8080']],
    ['HTTP statuses in their usual forms, one key', 'HTTP 404; HTTP/1.1 502; status: 500; statusCode=429; 503 Service Unavailable', ['code:HTTP 404', 'code:HTTP/1.1 502=>HTTP 502', 'code:status: 500=>HTTP 500', 'code:statusCode=429=>HTTP 429', 'code:503 Service Unavailable=>HTTP 503']],
    ['errno names, Node codes, signals, exit codes', "ENOENT: open; ERR_MODULE_NOT_FOUND; killed by SIGKILL; exited with code 137", ['code:ENOENT', 'code:ERR_MODULE_NOT_FOUND', 'code:SIGKILL', 'code:exited with code 137=>exit 137']],
    ['compiler and database codes, CVEs, exception classes', 'error[E0308] TS2345 SC2086 ORA-00942 CVE-2024-3094 TypeError NullPointerException', ['code:E0308', 'code:TS2345', 'code:SC2086', 'code:ORA-00942', 'code:CVE-2024-3094', 'code:TypeError', 'code:NullPointerException']],
    ['hashes: hex with a digit and a letter, 7+ chars; sha256: prefix dropped from the key; UUIDs', 'commit a1b2c3d sha256:9F86D081884C7D65 id 123e4567-e89b-12d3-a456-426614174000', ['hash:a1b2c3d', 'hash:sha256:9F86D081884C7D65=>9f86d081884c7d65', 'hash:123e4567-e89b-12d3-a456-426614174000']],
    ['not hashes: all digits (a number), all letters (a word), too short (a name with digits)', '12345678 deadbeef cafe12', ['number:12345678', 'identifier:cafe12']],
    ['versions: two dots, a v, or a pre-release; v dropped from the key', 'node v18.19.0, ts 5.4.2, v2.1, 1.0.0-beta.1, pi 3.14', ['version:v18.19.0=>18.19.0', 'version:5.4.2', 'version:v2.1=>2.1', 'version:1.0.0-beta.1', 'number:3.14']],
    ['paths: absolute, home, dot-relative, two slashes, a known extension, Windows', 'see /var/log/app.log ~/x/y ../up ./scripts/run.sh src/a/b src/a.ts package.json C:\\Users\\me\\a.txt', ['path:/var/log/app.log', 'path:~/x/y', 'path:../up', 'path:./scripts/run.sh', 'path:src/a/b', 'path:src/a.ts', 'path:package.json', 'path:C:\\Users\\me\\a.txt']],
    ['a path with a line number: the path, then the number', 'at src/main.rs:42:17', ['path:src/main.rs', 'number:42', 'number:17']],
    ['not paths: and/or, TCP/IP, a fraction', 'and/or TCP/IP 3/4', []],
    ['test names: pytest ids, Go, JUnit, snake test_ functions', 'tests/test_api.py::TestUsers::test_create[admin] TestParseHeader testLogin test_parse_empty', ['test:tests/test_api.py::TestUsers::test_create[admin]', 'test:TestParseHeader', 'test:testLogin', 'test:test_parse_empty']],
    ["a runner's result line: the test's own name, without its duration", ' × parser > handles empty input 12ms', ['test:handles empty input', 'number:12']],
    ['identifiers: backticks, snake, camel, Pascal with an inner capital, SCREAMING, dotted, flags, letters+digits', 'call `retries` getUserById HttpClient max_retries MAX_POOL_SIZE os.path.join --dry-run utf8', ['identifier:retries', 'identifier:getUserById', 'identifier:HttpClient', 'identifier:max_retries', 'identifier:MAX_POOL_SIZE', 'identifier:os.path.join', 'identifier:--dry-run', 'identifier:utf8']],
    ['not identifiers: plain words, e.g., capitalised words, ERROR', 'The Server said e.g. ERROR and Done', []],
    ['line references are not codes nor identifiers', 'L120: see L7 and #L4521', []],
  ])('%s', (_what, text, expected) => {
    expect(show(text)).toEqual(expected);
  });

  it('numberKey: separators, signs, leading and trailing zeros', () => {
    expect(['12,345', '+12345', '012345', '12_345', '12345.000', '-0.50', '-0'].map(numberKey)).toEqual(['12345', '12345', '12345', '12345', '12345', '-0.5', '0']);
  });
});

describe('appearsIn: when an anchor of one text is in another', () => {
  const idx = (t: string) => anchorIndex(t);
  const one = (t: string) => extractAnchors(t)[0]!;
  it('same key: 12,345 is 12345', () => expect(appearsIn(one('12,345'), idx('order 12345 failed'))).toBe(true));
  it('a path and its tail at a slash, either way', () => {
    expect(appearsIn(one('/home/u/proj/src/a.ts'), idx('in src/a.ts'))).toBe(true);
    expect(appearsIn(one('src/a.ts'), idx('at /home/u/proj/src/a.ts:3'))).toBe(true);
    expect(appearsIn(one('/x/data.ts'), idx('in src/a.ts'))).toBe(false);
    expect(appearsIn(one('src/pa.ts'), idx('/x/src/a.ts'))).toBe(false);
  });
  it('a short hash is a prefix of the long one', () => {
    expect(appearsIn(one('a1b2c3d'), idx('commit A1B2C3D4E5F60718'))).toBe(true);
    expect(appearsIn(one('a1b2c3e'), idx('commit a1b2c3d4e5f60718'))).toBe(false);
  });
  it('as a whole token where the other side read it as part of another anchor (404 inside HTTP 404)', () => {
    expect(appearsIn(one('returned 404'), idx('HTTP 404 Not Found'))).toBe(true);
    expect(appearsIn(one('port 404'), idx('took 4040 ms, 404.5 s, 1,404'))).toBe(false);
  });
  it('versions with or without the v', () => expect(appearsIn(one('v1.2.3'), idx('version 1.2.3'))).toBe(true));
});
