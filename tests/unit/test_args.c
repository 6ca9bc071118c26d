/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of driver argument parsing (include/rxpath/args.h):
 * "key=value,..." lists, the typed getters, MAC and number parsing, and
 * the unknown-key check. Every error message must name the offending key.
 */
#include <errno.h>
#include <string.h>
#include "rxpath/args.h"
#include "check.h"

/* Checks that @err mentions @what; prints the message when it does not. */
#define CHECK_MSG(err, what) do { \
	if (!strstr((err), (what))) { \
		printf("  %s:%d: message '%s' does not mention '%s'\n", __FILE__, __LINE__, \
		       (err), (what)); \
		check_failures++; \
	} \
} while (0)

static void test_parse_good(void)
{
	struct rxp_args a;
	char err[RXP_ERR_LEN] = "";

	CHECK_EQ(rxp_args_parse(&a, "size=64,flows=16,pcap=/tmp/x.pcap", err, sizeof(err)), 0);
	CHECK_EQ(a.n, 3);
	CHECK(!strcmp(a.arg[0].key, "size") && !strcmp(a.arg[0].value, "64"));
	CHECK(!strcmp(a.arg[1].key, "flows") && !strcmp(a.arg[1].value, "16"));
	CHECK(!strcmp(a.arg[2].key, "pcap") && !strcmp(a.arg[2].value, "/tmp/x.pcap"));
	for (unsigned i = 0; i < a.n; i++)
		CHECK(!a.arg[i].used);

	/* nothing at all is a valid, empty list */
	CHECK_EQ(rxp_args_parse(&a, "", err, sizeof(err)), 0);
	CHECK_EQ(a.n, 0);
	CHECK_EQ(rxp_args_parse(&a, NULL, err, sizeof(err)), 0);
	CHECK_EQ(a.n, 0);

	/* the first '=' splits: values may hold '=' */
	CHECK_EQ(rxp_args_parse(&a, "pcap=/tmp/a=b.pcap", err, sizeof(err)), 0);
	CHECK_EQ(a.n, 1);
	CHECK(!strcmp(a.arg[0].key, "pcap") && !strcmp(a.arg[0].value, "/tmp/a=b.pcap"));

	/* an empty value is a value */
	CHECK_EQ(rxp_args_parse(&a, "mac=", err, sizeof(err)), 0);
	CHECK_EQ(a.n, 1);
	CHECK(!strcmp(a.arg[0].value, ""));

	/* the longest key and value that fit */
	char text[512];
	char key[32], value[224];

	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	memset(value, 'v', sizeof(value) - 1);
	value[sizeof(value) - 1] = '\0';
	snprintf(text, sizeof(text), "%s=%s", key, value);
	CHECK_EQ(rxp_args_parse(&a, text, err, sizeof(err)), 0);
	CHECK_EQ(a.n, 1);
	CHECK_EQ(strlen(a.arg[0].key), 31);
	CHECK_EQ(strlen(a.arg[0].value), 223);

	/* RXP_ARGS_MAX arguments are accepted */
	size_t off = 0;

	for (int i = 0; i < RXP_ARGS_MAX; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off, "%sk%d=%d", i ? "," : "", i, i);
	CHECK_EQ(rxp_args_parse(&a, text, err, sizeof(err)), 0);
	CHECK_EQ(a.n, RXP_ARGS_MAX);
	CHECK(!strcmp(a.arg[RXP_ARGS_MAX - 1].key, "k23"));
}

static void test_parse_bad(void)
{
	static const struct { const char *text, *must_say; } cases[] = {
		{ "size", "size" },			/* no '=' */
		{ "size=64,flows", "flows" },
		{ "=64", "=64" },			/* no key */
		{ "size=64,,flows=2", "key=value" },	/* empty item */
		{ "size=64,size=128", "size" },		/* given twice */
	};
	struct rxp_args a;

	for (size_t i = 0; i < RXP_ARRAY_SIZE(cases); i++) {
		char err[RXP_ERR_LEN] = "";

		CHECK_EQ(rxp_args_parse(&a, cases[i].text, err, sizeof(err)), -EINVAL);
		CHECK_MSG(err, cases[i].must_say);
	}

	char text[600], err[RXP_ERR_LEN];
	size_t off = 0;

	/* key of 32 characters, value of 224: too long, and the message quotes them */
	memset(text, 'k', 32);
	strcpy(text + 32, "=1");
	CHECK_EQ(rxp_args_parse(&a, text, err, sizeof(err)), -EINVAL);
	CHECK_MSG(err, "too long");
	strcpy(text, "pcap=");
	memset(text + 5, 'v', 224);
	text[5 + 224] = '\0';
	CHECK_EQ(rxp_args_parse(&a, text, err, sizeof(err)), -EINVAL);
	CHECK_MSG(err, "pcap=vvv");

	/* one argument too many */
	for (int i = 0; i <= RXP_ARGS_MAX; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off, "%sk%d=%d", i ? "," : "", i, i);
	CHECK_EQ(rxp_args_parse(&a, text, err, sizeof(err)), -EINVAL);
	CHECK_MSG(err, "too many");

	/* a short error buffer is truncated, not overrun */
	char small[8];

	memset(small, 'x', sizeof(small));
	CHECK_EQ(rxp_args_parse(&a, "averyveryverylongkey", small, sizeof(small)), -EINVAL);
	CHECK(memchr(small, '\0', sizeof(small)) != NULL);
}

static void test_get_and_unused(void)
{
	struct rxp_args a;
	char err[RXP_ERR_LEN] = "";

	CHECK_EQ(rxp_args_parse(&a, "size=64,colour=red,flows=2", err, sizeof(err)), 0);
	CHECK(rxp_args_get(&a, "missing") == NULL);
	CHECK(rxp_args_get(&a, "siz") == NULL);	/* whole keys only */
	CHECK(rxp_args_get(&a, "size") != NULL && !strcmp(rxp_args_get(&a, "size"), "64"));
	CHECK(a.arg[0].used);
	CHECK(!a.arg[1].used);
	CHECK(rxp_args_get(&a, "flows") != NULL);
	/* colour was never taken: reported with the list of known keys */
	CHECK_EQ(rxp_args_check_unused(&a, "size, flows", err, sizeof(err)), -EINVAL);
	CHECK_MSG(err, "colour");
	CHECK_MSG(err, "size, flows");
	CHECK(!strcmp(rxp_args_get(&a, "colour"), "red"));
	CHECK_EQ(rxp_args_check_unused(&a, "size, flows, colour", err, sizeof(err)), 0);

	/* an empty list has nothing unused */
	CHECK_EQ(rxp_args_parse(&a, "", err, sizeof(err)), 0);
	CHECK_EQ(rxp_args_check_unused(&a, "", err, sizeof(err)), 0);
}

static void test_u32(void)
{
	struct rxp_args a;
	char err[RXP_ERR_LEN] = "";
	uint32_t v;

	CHECK_EQ(rxp_args_parse(&a, "size=64,big=4294967295,zero=0", err, sizeof(err)), 0);
	v = 7;
	CHECK_EQ(rxp_args_u32(&a, "absent", 0, 100, &v, err, sizeof(err)), 0);
	CHECK_EQ(v, 7);	/* untouched when absent */
	CHECK_EQ(rxp_args_u32(&a, "size", 64, 1522, &v, err, sizeof(err)), 0);
	CHECK_EQ(v, 64);
	CHECK_EQ(rxp_args_u32(&a, "big", 0, UINT32_MAX, &v, err, sizeof(err)), 0);
	CHECK_EQ(v, UINT32_MAX);
	CHECK_EQ(rxp_args_u32(&a, "zero", 0, 10, &v, err, sizeof(err)), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(rxp_args_check_unused(&a, "", err, sizeof(err)), 0);

	static const char *const bad[] = {
		"size=63", "size=1523", "size=", "size=abc", "size=-1", "size=+64", "size=64x",
		"size=6 4", "size=0x40", "size=1e2", "size=99999999999999999999999",
		"size=4294967360",	/* 2^32 + 64: must not wrap to 64 */
	};

	for (size_t i = 0; i < RXP_ARRAY_SIZE(bad); i++) {
		char msg[RXP_ERR_LEN] = "";

		CHECK_EQ(rxp_args_parse(&a, bad[i], err, sizeof(err)), 0);
		v = 1000;
		CHECK_EQ(rxp_args_u32(&a, "size", 64, 1522, &v, msg, sizeof(msg)), -EINVAL);
		CHECK_EQ(v, 1000);
		CHECK_MSG(msg, bad[i]);	/* "size=63: expected ..." */
		CHECK_MSG(msg, "64");	/* and the range */
		CHECK_MSG(msg, "1522");
	}
}

static void test_double(void)
{
	struct rxp_args a;
	char err[RXP_ERR_LEN] = "";
	double d;

	CHECK_EQ(rxp_args_parse(&a, "bad=10.5,lo=0,hi=100", err, sizeof(err)), 0);
	d = -1;
	CHECK_EQ(rxp_args_double(&a, "absent", 0, 100, &d, err, sizeof(err)), 0);
	CHECK(d == -1);
	CHECK_EQ(rxp_args_double(&a, "bad", 0, 100, &d, err, sizeof(err)), 0);
	CHECK(d == 10.5);
	CHECK_EQ(rxp_args_double(&a, "lo", 0, 100, &d, err, sizeof(err)), 0);
	CHECK(d == 0);
	CHECK_EQ(rxp_args_double(&a, "hi", 0, 100, &d, err, sizeof(err)), 0);
	CHECK(d == 100);

	static const char *const bad[] = {
		"bad=100.01", "bad=-0.5", "bad=", "bad=nan", "bad=inf", "bad=5%", "bad=ten",
	};

	for (size_t i = 0; i < RXP_ARRAY_SIZE(bad); i++) {
		char msg[RXP_ERR_LEN] = "";

		CHECK_EQ(rxp_args_parse(&a, bad[i], err, sizeof(err)), 0);
		d = 42;
		CHECK_EQ(rxp_args_double(&a, "bad", 0, 100, &d, msg, sizeof(msg)), -EINVAL);
		CHECK(d == 42);
		CHECK_MSG(msg, bad[i]);
	}
}

static void test_parse_mac(void)
{
	uint8_t mac[6];
	static const uint8_t want1[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static const uint8_t want2[6] = { 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };

	CHECK_EQ(rxp_parse_mac("02:00:00:00:00:01", mac), 0);
	CHECK(!memcmp(mac, want1, 6));
	CHECK_EQ(rxp_parse_mac("AA:bb:CC:dd:EE:ff", mac), 0);
	CHECK(!memcmp(mac, want2, 6));
	CHECK_EQ(rxp_parse_mac("ff:ff:ff:ff:ff:ff", mac), 0);

	static const char *const bad[] = {
		"", "02:00:00:00:00", "02:00:00:00:00:01:", "02:00:00:00:00:01:02",
		"02-00-00-00-00-01", "0g:00:00:00:00:01", "2:0:0:0:0:1", "002:00:00:00:00:1",
		"02:00:00:00:00:0", "02:00:00:00:00:001", "0200.0000.0001", "02:00:00:00:00:01 ",
		"02::00:00:00:00:1",
	};

	for (size_t i = 0; i < RXP_ARRAY_SIZE(bad); i++) {
		memcpy(mac, want2, 6);
		if (rxp_parse_mac(bad[i], mac) != -EINVAL) {
			printf("  rxp_parse_mac accepted '%s'\n", bad[i]);
			check_failures++;
		}
	}
}

/* Each octet is exactly two hex digits: no signs, no blanks (sscanf's %x would take them). */
static void test_parse_mac_rejects_signs_and_blanks(void)
{
	static const char *const bad[] = {
		"-1:00:00:00:00:00",	/* %2x reads -1 -> 0xff */
		"+1:00:00:00:00:00",
		" 1:00:00:00:00:00",
		"02:00:00:00:00:-1",
		"02:00:00:00: 0:01",
	};
	uint8_t mac[6];

	for (size_t i = 0; i < RXP_ARRAY_SIZE(bad); i++) {
		if (rxp_parse_mac(bad[i], mac) != -EINVAL) {
			printf("  rxp_parse_mac accepted '%s' as %02x:%02x:%02x:%02x:%02x:%02x\n",
			       bad[i], mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
			check_failures++;
		}
	}
}

static void test_args_mac(void)
{
	struct rxp_args a;
	char err[RXP_ERR_LEN] = "";
	uint8_t mac[6] = { 1, 2, 3, 4, 5, 6 };
	static const uint8_t keep[6] = { 1, 2, 3, 4, 5, 6 };

	CHECK_EQ(rxp_args_parse(&a, "mac=02:aa:00:00:00:09,peer=zz", err, sizeof(err)), 0);
	CHECK_EQ(rxp_args_mac(&a, "absent", mac, err, sizeof(err)), 0);
	CHECK(!memcmp(mac, keep, 6));
	CHECK_EQ(rxp_args_mac(&a, "mac", mac, err, sizeof(err)), 0);
	CHECK_EQ(mac[1], 0xaa);
	CHECK_EQ(mac[5], 0x09);
	memcpy(mac, keep, 6);
	CHECK_EQ(rxp_args_mac(&a, "peer", mac, err, sizeof(err)), -EINVAL);
	CHECK(!memcmp(mac, keep, 6));
	CHECK_MSG(err, "peer=zz");
	CHECK_MSG(err, "MAC");
}

static void test_parse_u64(void)
{
	uint64_t v = 0;

	CHECK_EQ(rxp_parse_u64("0", 0, 10, &v), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(rxp_parse_u64("10", 0, 10, &v), 0);
	CHECK_EQ(v, 10);
	CHECK_EQ(rxp_parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
	CHECK_EQ(v, UINT64_MAX);

	static const struct { const char *text; uint64_t min, max; } bad[] = {
		{ "11", 0, 10 }, { "4", 5, 10 }, { "", 0, 10 }, { "-1", 0, 10 }, { "+1", 0, 10 },
		{ "1 ", 0, 10 }, { "1.0", 0, 10 }, { "0x5", 0, 10 }, { "abc", 0, 10 },
		{ "18446744073709551616", 0, UINT64_MAX },	/* out of range, not clamped */
		{ "-1", 0, UINT64_MAX },
	};

	for (size_t i = 0; i < RXP_ARRAY_SIZE(bad); i++) {
		v = 12345;
		if (rxp_parse_u64(bad[i].text, bad[i].min, bad[i].max, &v) != -EINVAL) {
			printf("  rxp_parse_u64 accepted '%s'\n", bad[i].text);
			check_failures++;
		}
		CHECK_EQ(v, 12345);
	}
	CHECK_EQ(rxp_parse_u64(NULL, 0, 10, &v), -EINVAL);
}

/*
 * A minus sign behind a blank slips past the sign check: strtoull skips the
 * blank and negates, so " -1" reads as 2^64 - 1 ("count= -1" would mean
 * "send forever"). A whole decimal number has neither blanks nor signs.
 */
static void test_parse_u64_rejects_blank_and_sign(void)
{
	static const char *const bad[] = { " -1", "\t-1", " 5", " +5" };
	uint64_t v;

	for (size_t i = 0; i < RXP_ARRAY_SIZE(bad); i++) {
		v = 12345;
		if (rxp_parse_u64(bad[i], 0, UINT64_MAX, &v) != -EINVAL) {
			printf("  rxp_parse_u64 accepted '%s' as %" PRIu64 "\n", bad[i], v);
			check_failures++;
		}
	}
}

int main(void)
{
	RUN(test_parse_good);
	RUN(test_parse_bad);
	RUN(test_get_and_unused);
	RUN(test_u32);
	RUN(test_double);
	RUN(test_parse_mac);
	RUN(test_parse_mac_rejects_signs_and_blanks);
	RUN(test_args_mac);
	RUN(test_parse_u64);
	RUN(test_parse_u64_rejects_blank_and_sign);
	return tests_done();
}
