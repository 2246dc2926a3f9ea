// The text a tools/call result shows the model: its text content blocks, joined and bounded.
import { asRecord } from '../codec/json-value.ts';

/** Where a content block's text starts in the joined text of `textBlocks`. */
export interface BlockStart {
  /** Index of the block in `content`. */
  index: number;
  /** Offset of its text in the joined text. */
  at: number;
}

/** The text of a tools/call result's text content blocks, joined by newlines (bounded), with where each starts. */
export function textBlocks(result: unknown, max = 4096): { text: string; starts: BlockStart[] } {
  const content = asRecord(result)?.content;
  const starts: BlockStart[] = [];
  let text = '';
  if (!Array.isArray(content)) return { text, starts };
  for (let i = 0; i < content.length && text.length < max; i++) {
    const block = asRecord(content[i]);
    if (block?.type !== 'text' || typeof block.text !== 'string') continue;
    if (text) text += '\n';
    starts.push({ index: i, at: text.length });
    text += block.text;
  }
  return { text: text.slice(0, max), starts };
}

/** The text of a tools/call result's text content blocks, joined (bounded). */
export const resultText = (result: unknown, max = 4096): string => textBlocks(result, max).text;
