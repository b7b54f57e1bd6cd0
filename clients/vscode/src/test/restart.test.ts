import * as assert from 'assert';
import { RestartPolicy } from '../restart';

describe('restart policy', () => {
  it('restarts three times within three minutes, then gives up and says why', () => {
    const policy = new RestartPolicy(3, 180_000);
    const t0 = 1_000_000;
    assert.strictEqual(policy.onClosed(t0).restart, true);
    assert.strictEqual(policy.onClosed(t0 + 1000).restart, true);
    assert.strictEqual(policy.onClosed(t0 + 2000).restart, true);
    const fourth = policy.onClosed(t0 + 3000);
    assert.strictEqual(fourth.restart, false);
    assert.match(fourth.message, /stopped 4 times in 3 minutes/);
    assert.match(fourth.message, /Restart server/);
  });

  it('forgets crashes older than the window', () => {
    const policy = new RestartPolicy(3, 180_000);
    for (let i = 0; i < 3; i++) {
      assert.ok(policy.onClosed(i * 1000).restart);
    }
    assert.ok(policy.onClosed(200_000).restart, 'the first crashes are more than 3 minutes old');
  });

  it('starts counting afresh after a deliberate restart', () => {
    const policy = new RestartPolicy(1, 180_000);
    assert.ok(policy.onClosed(0).restart);
    assert.ok(!policy.onClosed(1).restart);
    policy.reset();
    assert.ok(policy.onClosed(2).restart);
  });
});
