package dev.ferret.runtime.dialect;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class AdvisoryLockKeysTest {

    @Test
    void keysAreStableAcrossJvmsAndReleases() {
        // pinned: a change here would let nodes of two releases take different locks for the same name
        assertThat(AdvisoryLockKeys.keyOf("ferret:migration:public")).isEqualTo(
                AdvisoryLockKeys.keyOf("ferret:migration:" + "public"));
        assertThat(AdvisoryLockKeys.keyOf("a")).isEqualTo(0xca978112ca1bbdcaL);
        assertThat(AdvisoryLockKeys.migrationLockName("DBO")).isEqualTo("ferret:migration:dbo");
    }
}
