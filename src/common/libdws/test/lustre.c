/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jsontap.h"
#include "parse/breakdown.h"
#include "placement/lustre.h"


static void sets_is (const char *storage, const char *reserved, const char *conf,
                     int64_t min, const char *expect, const char *what)
{
    dws_error_t err;
    json_dump_is (dws_lustre_allocation_sets_json (storage, reserved, conf, min, &err), expect,
                  err.text, JSON_SORT_KEYS, what);
}

static void fails_with (const char *storage, const char *reserved, const char *conf,
                        const char *text, const char *what)
{
    dws_error_t err;
    char *s = dws_lustre_allocation_sets_json (storage, reserved, conf, 4LL << 30, &err);
    ok (s == NULL && strstr (err.text, text) != NULL, "%s", what);
    if (s || !strstr (err.text, text))
        diag ("got %s / %s", s ? s : "NULL", err.text);
    free (s);
}

/* ost C GiB, mdt 4 GiB, mgt 4 GiB (nnf-sos' default profile shape) */
#define LUS(ost)                                                                          \
    "{\"allocationSets\":["                                                               \
    "{\"label\":\"ost\",\"allocationStrategy\":\"AllocateAcrossServers\","                \
    "\"minimumCapacity\":" ost "},"                                                       \
    "{\"label\":\"mdt\",\"allocationStrategy\":\"AllocateAcrossServers\","                \
    "\"minimumCapacity\":4294967296},"                                                    \
    "{\"label\":\"mgt\",\"allocationStrategy\":\"AllocateSingleServer\","                 \
    "\"minimumCapacity\":4294967296,\"constraints\":{\"colocation\":[{\"type\":\"exclusive\"," \
    "\"key\":\"lustre-mgt\"}]}}]}"
#define E(name, n) "{\"name\":\"" name "\",\"allocationCount\":" #n "}"
#define SET(label, size, list) "{\"label\":\"" label "\",\"allocationSize\":" size ",\"storage\":[" list "]}"

static void config (void)
{
    dws_error_t err;
    json_t *t = dws_lustre_check_table ("rabbit.lustre", NULL, &err);
    char *s = json_dumps (t, JSON_COMPACT | JSON_SORT_KEYS);
    is (s, "{\"max_rabbits\":0,\"mdts\":1,\"min_rabbits\":1,\"osts_per_mdt\":0,\"spread\":false,"
           "\"whole_rabbit_gib\":0}",
        "defaults: spread off, 1 MDT, 1..any rabbits");
    free (s);
    json_decref (t);
    struct {
        const char *in, *msg;
    } bad[] = {
        {"{\"spred\":true}", "rabbit.lustre.spred: unknown key"},
        {"{\"spread\":1}", "rabbit.lustre.spread: must be true or false"},
        {"{\"mdts\":0}", "rabbit.lustre.mdts: must be an integer from 1"},
        {"{\"min_rabbits\":2.0}", "rabbit.lustre.min_rabbits: must be an integer"},
        {"{\"min_rabbits\":4,\"max_rabbits\":2}", "max_rabbits (2) is below min_rabbits (4)"},
        {"[]", "rabbit.lustre: must be a table"},
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        json_t *in = json_loads (bad[i].in, 0, NULL);
        json_t *o = dws_lustre_check_table ("rabbit.lustre", in, &err);
        ok (!o && strstr (err.text, bad[i].msg), "refused: %s", bad[i].in);
        if (o || !strstr (err.text, bad[i].msg))
            diag ("got: %s", o ? "accepted" : err.text);
        json_decref (o);
        json_decref (in);
    }
}

#define NODE4 "[{\"type\":\"node\",\"count\":4,\"with\":[{\"type\":\"slot\",\"count\":1,\"label\":\"task\",\"with\":[{\"type\":\"core\",\"count\":1}]}]}]"
#define READY(sets) "{\"ready\":true,\"storage\":{\"allocationSets\":" sets "}}"
#define OST(c) "{\"label\":\"ost\",\"allocationStrategy\":\"AllocateAcrossServers\",\"minimumCapacity\":" c "}"
#define MDT "{\"label\":\"mdt\",\"allocationStrategy\":\"AllocateAcrossServers\",\"minimumCapacity\":5368709120}"
#define XFS "{\"label\":\"xfs\",\"allocationStrategy\":\"AllocatePerCompute\",\"minimumCapacity\":10737418240}"

static void rewrite_is (const char *res, const char *bds, const char *conf, const char *expect,
                        const char *what)
{
    dws_error_t err;
    json_dump_is (dws_lustre_rewrite_json (res, bds, conf, 4, &err), expect, err.text,
                  JSON_SORT_KEYS, what);
}

static void rewrite (void)
{
    const char *node1 = "{\"type\":\"node\",\"count\":4,\"with\":[{\"type\":\"slot\",\"count\":1,"
                        "\"label\":\"task\",\"with\":[{\"type\":\"core\",\"count\":1}]}]}";
    char expect[2048];
    /* 200 TiB of OSTs + 5 GiB MDT: 204800 + 5 GiB, plus 1/32, in one request */
    snprintf (expect, sizeof (expect),
              "{\"spread\":true,\"resources\":[%s,{\"type\":\"ssd\",\"count\":211206,"
              "\"exclusive\":true}]}",
              node1);
    rewrite_is (NODE4, "[" READY ("[" OST ("219902325555200") "," MDT "]") "]",
                "{\"spread\":true}", expect,
                "spread: the node entry as written plus the whole file system in ssd");
    rewrite_is (NODE4, "[" READY ("[" OST ("219902325555200") "," MDT "]") "]", NULL,
                "{\"spread\":false,\"resources\":[{\"type\":\"slot\",\"count\":4,"
                "\"label\":\"rabbit\",\"with\":[{\"type\":\"node\",\"count\":1,\"with\":"
                "[{\"type\":\"slot\",\"count\":1,\"label\":\"task\",\"with\":[{\"type\":"
                "\"core\",\"count\":1}]}]},{\"type\":\"ssd\",\"count\":51204,\"exclusive\":"
                "true}]}]}",
                "off switch (the default): today's node-local rewrite");
    dws_error_t err;
    char *s = dws_lustre_rewrite_json (NODE4, "[" READY ("[" XFS "," OST ("1099511627776") "]") "]",
                                       "{\"spread\":true}", 4, &err);
    ok (s && strstr (s, "\"spread\":false") && strstr (s, "\"label\":\"rabbit\""),
        "xfs beside lustre: node-local (no Fluxion form holds both)");
    free (s);
    s = dws_lustre_rewrite_json ("[{\"type\":\"slot\",\"count\":2,\"label\":\"task\",\"with\":"
                                 "[{\"type\":\"node\",\"count\":2}]}]",
                                 "[" READY ("[" OST ("1099511627776") "]") "]",
                                 "{\"spread\":true}", 4, &err);
    ok (s && strstr (s, "\"spread\":false"), "slot form: node-local");
    free (s);
    s = dws_lustre_rewrite_json (NODE4, "[" READY ("[" OST ("219902325555200") "," MDT "]") "]",
                                 "{\"spread\":true,\"whole_rabbit_gib\":28548}", 4, &err);
    ok (s && strstr (s, "\"count\":228384"), "whole rabbits: 211206 GiB -> 8 rabbits of 28548");
    free (s);
    s = dws_lustre_rewrite_json (NODE4, "[" READY ("[" OST ("1099511627776") "]") "]",
                                 "{\"spread\":true,\"whole_rabbit_gib\":28548,"
                                 "\"min_rabbits\":4}", 4, &err);
    ok (s && strstr (s, "\"count\":114192"), "whole rabbits: at least min_rabbits of them");
    free (s);
    s = dws_lustre_rewrite_json (NODE4, "[" READY ("[" OST ("219902325555200") "]") "]",
                                 "{\"spread\":true,\"whole_rabbit_gib\":28548,"
                                 "\"max_rabbits\":4}", 4, &err);
    ok (!s && strstr (err.text, "Lustre needs 211200 GiB: 8 whole rabbits of 28548 GiB, more"
                                " than rabbit.lustre.max_rabbits (4)"),
        "whole rabbits beyond max_rabbits: refused at the rewrite, with the numbers");
    if (s || !strstr (err.text, "max_rabbits (4)"))
        diag ("got %s / %s", s ? s : "NULL", err.text);
    free (s);
}

static void from_R (void)
{
    dws_error_t err;
    const char *R =
        "{\"version\":1,\"execution\":{\"R_lite\":[],\"nodelist\":[\"c1\"]},\"scheduling\":"
        "{\"graph\":{\"nodes\":["
        "{\"id\":\"1\",\"metadata\":{\"type\":\"chassis\",\"properties\":{\"rabbit\":\"rab1\"},"
        "\"paths\":{\"containment\":\"/x/chassis0\"}}},"
        "{\"id\":\"2\",\"metadata\":{\"type\":\"ssd\",\"size\":113,\"paths\":{\"containment\":"
        "\"/x/chassis0/ssd3\"}}},"
        "{\"id\":\"3\",\"metadata\":{\"type\":\"ssd\",\"size\":113,\"paths\":{\"containment\":"
        "\"/x/chassis0/ssd4\"}}},"
        "{\"id\":\"4\",\"metadata\":{\"type\":\"chassis\",\"properties\":{\"rabbit\":\"rab7\"},"
        "\"paths\":{\"containment\":\"/x/chassis6\"}}},"
        "{\"id\":\"5\",\"metadata\":{\"type\":\"ssd\",\"size\":100,\"paths\":{\"containment\":"
        "\"/x/chassis6/ssd0\"}}},"
        "{\"id\":\"6\",\"metadata\":{\"type\":\"node\",\"paths\":{\"containment\":"
        "\"/x/chassis0/c1\"}}}]}}}";
    json_dump_is (dws_lustre_reserved_of_R_json (R, &err), "{\"rab1\":226,\"rab7\":100}",
                  err.text, JSON_SORT_KEYS, "R: GiB of ssd per rabbit, by chassis property");
    json_dump_is (dws_lustre_reserved_of_R_json ("{\"version\":1}", &err), "{}", err.text,
                  JSON_SORT_KEYS, "R without a graph: nothing reserved");
    char *s = dws_lustre_reserved_of_R_json (
        "{\"scheduling\":{\"graph\":{\"nodes\":[{\"metadata\":{\"type\":\"ssd\",\"size\":1,"
        "\"paths\":{\"containment\":\"/x/y/ssd0\"}}}]}}}",
        &err);
    ok (!s && strstr (err.text, "not under a chassis with a rabbit property"),
        "an ssd outside any rabbit's chassis is an error");
    free (s);
}

static void placement (void)
{
    const char *three = "{\"r1\":100,\"r2\":100,\"r3\":100}";
    sets_is (LUS ("257698037760"), three, NULL, 4LL << 30,
             "[" SET ("ost", "85899345920", E ("r1", 1) "," E ("r2", 1) "," E ("r3", 1)) ","
             SET ("mdt", "4294967296", E ("r1", 1)) "," SET ("mgt", "4294967296", E ("r1", 1))
             "]",
             "240 GiB on three 100 GiB reservations: 80 GiB each; MDT and MGT on the first");
    sets_is (LUS ("257698037760"), three, "{\"max_rabbits\":2}", 4LL << 30,
             "[" SET ("ost", "98784247808", E ("r1", 1) "," E ("r2", 1) "," E ("r3", 1)) ","
             SET ("mdt", "4294967296", E ("r1", 1)) "," SET ("mgt", "4294967296", E ("r1", 1))
             "]",
             "max_rabbits too small for the OSTs: the largest equal-size OSTs on every"
             " reserved rabbit (here 92 GiB, one each)");
    sets_is (LUS ("257698037760"), "{\"r1\":200,\"r2\":50}", NULL, 4LL << 30,
             "[" SET ("ost", "51539607552", E ("r1", 4) "," E ("r2", 1)) ","
             SET ("mdt", "4294967296", E ("r1", 1)) "," SET ("mgt", "4294967296", E ("r1", 1))
             "]",
             "uneven reservation: the largest same-size OSTs (48 GiB), as many as fit");
    const char *four = "{\"r4\":100,\"r3\":100,\"r2\":100,\"r1\":100}";
    sets_is (LUS ("343597383680"), four, "{\"osts_per_mdt\":2}", 4LL << 30,
             "[" SET ("ost", "85899345920",
                      E ("r1", 1) "," E ("r2", 1) "," E ("r3", 1) "," E ("r4", 1)) ","
             SET ("mdt", "4294967296", E ("r1", 1) "," E ("r2", 1)) ","
             SET ("mgt", "4294967296", E ("r1", 1)) "]",
             "one MDT per two OST rabbits");
    sets_is (LUS ("343597383680"), four, "{\"mdts\":3}", 0,
             "[" SET ("ost", "85899345920",
                      E ("r1", 1) "," E ("r2", 1) "," E ("r3", 1) "," E ("r4", 1)) ","
             SET ("mdt", "1431655766", E ("r1", 1) "," E ("r2", 1) "," E ("r3", 1)) ","
             SET ("mgt", "4294967296", E ("r1", 1)) "]",
             "three MDTs share the MDT capacity");
    sets_is (LUS ("343597383680"), four, "{\"min_rabbits\":2,\"max_rabbits\":2}", 4LL << 30,
             "[" SET ("ost", "98784247808", E ("r1", 1) "," E ("r2", 1) "," E ("r3", 1) ","
                      E ("r4", 1)) ","
             SET ("mdt", "4294967296", E ("r1", 1)) "," SET ("mgt", "4294967296", E ("r1", 1))
             "]",
             "two rabbits cannot hold 320 GiB: every reserved rabbit");
    fails_with (LUS ("257698037760"), "{\"r1\":100}", NULL,
                "Fluxion reserved 100 GiB on 1 rabbit(s), too little for 240 GiB",
                "a reservation that cannot hold the file system is refused");
    fails_with (LUS ("257698037760"), "{}", NULL, "R holds no ssd", "nothing reserved");
    fails_with ("{\"allocationSets\":[" XFS "]}", three, NULL, "takes only ost, mdt, mgt",
                "per-compute sets are not Lustre");
}

int main (void)
{
    config ();
    rewrite ();
    from_R ();
    placement ();
    return done_testing ();
}
