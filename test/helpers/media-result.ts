import crypto from 'node:crypto';

/**
 * An MCP tool result over any small limit holding one media block (image or audio, base64) and an
 * HTML page with a script, `htmlRepeats` times over, as a resource blob: assets a viewer must not
 * run. The pad is random text: a repeated character would count as a few exact tokens and pass.
 */
export function mediaAndHtmlResult(media: { type: 'image' | 'audio'; mimeType: string; bytes: Buffer }, htmlRepeats: number): string {
  const html = Buffer.from('<html><script>alert(1)</script></html>'.repeat(htmlRepeats));
  return JSON.stringify({
    content: [
      { type: media.type, mimeType: media.mimeType, data: media.bytes.toString('base64') },
      { type: 'resource', resource: { uri: 'file:///x.html', mimeType: 'text/html', blob: html.toString('base64') } },
    ],
    pad: crypto.randomBytes(30_000).toString('hex'),
  });
}
