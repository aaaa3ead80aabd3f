// Waiting for new topics' leaders. Right after a topic is created, a KRaft broker may answer a
// metadata request for it with UNKNOWN_TOPIC_OR_PARTITION ("This server does not host this
// topic-partition") until the controller's record reaches it; kafkajs's own wait
// (createTopics({ waitForLeaders: true })) retries only LEADER_NOT_AVAILABLE and gave up at once,
// which failed a distributed test's set-up in CI. The broker's timing cannot be provoked on
// demand, so this test answers the metadata requests itself (a stand-in for the admin client:
// the one thing here no real server can be made to do at will). The Kafka contract suites
// (tests/infra) create topics on a real broker through the same function.
import { describe, expect, it } from 'vitest';
import { KafkaJSProtocolError } from 'kafkajs';
import { waitForTopicLeaders, type TopicMetadataSource } from '../src/events/kafka-topic-leaders.js';

function protocolError(type: 'UNKNOWN_TOPIC_OR_PARTITION' | 'LEADER_NOT_AVAILABLE' | 'TOPIC_AUTHORIZATION_FAILED') {
  const codes = { UNKNOWN_TOPIC_OR_PARTITION: 3, LEADER_NOT_AVAILABLE: 5, TOPIC_AUTHORIZATION_FAILED: 29 };
  // kafkajs builds its protocol errors from the broker's error entry (its typings say Error).
  const entry = { type, code: codes[type], retriable: type !== 'TOPIC_AUTHORIZATION_FAILED', message: type };
  return new KafkaJSProtocolError(entry as unknown as Error);
}

/** Answers each metadata request with the next of `answers` (an error is thrown). */
function scripted(answers: (Error | { leader: number })[]): TopicMetadataSource & { calls: number } {
  const source = {
    calls: 0,
    async fetchTopicMetadata({ topics }: { topics: string[] }) {
      const answer = answers[Math.min(source.calls, answers.length - 1)]!;
      source.calls += 1;
      if (answer instanceof Error) throw answer;
      return {
        topics: topics.map((name) => ({ name, partitions: [0, 1, 2].map((partitionId) => ({ partitionId, leader: answer.leader })) })),
      };
    },
  };
  return source;
}

describe('waitForTopicLeaders', () => {
  it('waits through "does not host this topic-partition" and a missing leader until every partition has one', async () => {
    const source = scripted([
      protocolError('UNKNOWN_TOPIC_OR_PARTITION'),
      protocolError('LEADER_NOT_AVAILABLE'),
      { leader: -1 },
      { leader: 1 },
    ]);
    await waitForTopicLeaders(source, ['ns.evidence'], { timeoutMs: 5_000, intervalMs: 1 });
    expect(source.calls).toBe(4);
  });

  it('gives up after its time with the topics it waited for in the message', async () => {
    const source = scripted([protocolError('UNKNOWN_TOPIC_OR_PARTITION')]);
    await expect(waitForTopicLeaders(source, ['ns.evidence', 'ns.identity'], { timeoutMs: 50, intervalMs: 5 })).rejects.toThrow(
      /Kafka topics ns\.evidence, ns\.identity have no leaders after 0.05 s: UNKNOWN_TOPIC_OR_PARTITION/,
    );
  });

  it('does not wait on an error that time will not mend', async () => {
    const source = scripted([protocolError('TOPIC_AUTHORIZATION_FAILED')]);
    await expect(waitForTopicLeaders(source, ['ns.evidence'], { timeoutMs: 5_000, intervalMs: 1 })).rejects.toThrow(
      /TOPIC_AUTHORIZATION_FAILED/,
    );
    expect(source.calls).toBe(1);
  });
});
