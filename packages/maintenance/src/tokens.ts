import { estimateTokens } from '@engram/contracts';

/** The token estimate of a list of chat messages: the sum of the contracts estimate of each content. */
export function estimateMessagesTokens(messages: readonly { readonly content: string }[]): number {
  let total = 0;
  for (const m of messages) total += estimateTokens(m.content);
  return total;
}
