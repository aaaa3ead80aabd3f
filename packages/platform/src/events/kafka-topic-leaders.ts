/** What waitForTopicLeaders needs of kafkajs's admin client. */
export interface TopicMetadataSource {
  fetchTopicMetadata(request: { topics: string[] }): Promise<{ topics: { name: string; partitions: { leader: number }[] }[] }>;
}

/**
 * The broker's answers that mean "not yet" for a topic just created: LEADER_NOT_AVAILABLE while
 * partitions elect, and UNKNOWN_TOPIC_OR_PARTITION ("This server does not host this
 * topic-partition") while the controller's record has not reached the broker that answers.
 */
const NOT_YET = new Set(['LEADER_NOT_AVAILABLE', 'UNKNOWN_TOPIC_OR_PARTITION']);

/**
 * Waits until every partition of `topics` has a leader. Used after creating topics instead of
 * kafkajs's `waitForLeaders`, which retries only LEADER_NOT_AVAILABLE: a KRaft broker may first
 * answer UNKNOWN_TOPIC_OR_PARTITION for a topic it has just created, and kafkajs gave up at once.
 * Any other error is thrown at once; after `timeoutMs` the last reason is.
 */
export async function waitForTopicLeaders(
  admin: TopicMetadataSource,
  topics: string[],
  { timeoutMs = 30_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  if (topics.length === 0) return;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let reason: string;
    try {
      const { topics: found } = await admin.fetchTopicMetadata({ topics });
      const waiting = topics.filter((topic) => {
        const partitions = found.find((entry) => entry.name === topic)?.partitions ?? [];
        return partitions.length === 0 || partitions.some((partition) => partition.leader < 0);
      });
      if (waiting.length === 0) return;
      reason = `no leader yet for ${waiting.join(', ')}`;
    } catch (error) {
      const type = (error as { type?: string }).type;
      if (!type || !NOT_YET.has(type)) throw error;
      reason = (error as Error).message;
    }
    if (Date.now() >= deadline) {
      throw new Error(`Kafka topics ${topics.join(', ')} have no leaders after ${timeoutMs / 1000} s: ${reason}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
