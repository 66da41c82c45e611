/*
 * trace_json.c - Chrome trace-event (JSON) writers: an engine's two streams,
 * and a detailed point's whole iteration (one process per pipeline
 * stage, a thread per track).
 */
#include "trace_json.h"

#include "report.h"

int trace_json_engine(FILE *out, const engine *e, const char *title)
{
    if (!e->record)
        return -1;
    fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"title\":", out);
    report_json_string(out, title);
    fputs("},\"traceEvents\":[\n", out);
    fputs("{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_name\","
          "\"args\":{\"name\":\"compute\"}},\n",
          out);
    fputs("{\"ph\":\"M\",\"pid\":1,\"tid\":2,\"name\":\"thread_name\","
          "\"args\":{\"name\":\"communication\"}}",
          out);
    for (size_t i = 0; i < e->len; i++) {
        const engine_record *r = &e->records[i];
        char name[64];
        engine_label_name(r->label, name, sizeof name);
        fprintf(out, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"name\":\"%s\","
                     "\"ts\":",
                r->stream == ENGINE_COMP ? 1 : 2, name);
        report_json_number(out, r->t_start * 1e6);
        fputs(",\"dur\":", out);
        report_json_number(out, r->duration * 1e6);
        fputs("}", out);
    }
    fputs("\n]}\n", out);
    return ferror(out) ? -1 : 0;
}

typedef struct trace_sink {
    FILE *out;
    int64_t stages;
    int64_t n, max, dropped; /* events written, the cap, events left out */
} trace_sink;

static void trace_json_event(void *ctx, const detailed_event *ev)
{
    trace_sink *k = ctx;
    if (ev->stage + 1 > k->stages)
        k->stages = ev->stage + 1;
    if (k->n >= k->max) {
        k->dropped++;
        return;
    }
    k->n++;
    fprintf(k->out, ",\n{\"ph\":\"X\",\"pid\":%lld,\"tid\":%d,\"name\":",
            (long long)ev->stage, ev->track);
    report_json_string(k->out, ev->name);
    fputs(",\"ts\":", k->out);
    report_json_number(k->out, ev->start_s * 1e6);
    fputs(",\"dur\":", k->out);
    report_json_number(k->out, ev->dur_s * 1e6);
    fprintf(k->out, ",\"args\":{\"micro_batch\":%lld,\"chunk\":%lld",
            (long long)ev->micro_batch, (long long)ev->chunk);
    if (ev->track != DETAILED_TRACK_COMPUTE) {
        fputs(",\"bytes\":", k->out);
        report_json_number(k->out, ev->bytes);
        fprintf(k->out, ",\"group\":%lld", (long long)ev->group);
    }
    fputs("}}", k->out);
}

int trace_json_detailed(FILE *out, const point_t *p, double iteration_s, const char *title,
                        int64_t max_events, int64_t *dropped, status_code *st)
{
    static const char *const tracks[DETAILED_NTRACKS] = {"compute", "tp", "cp",
                                                        "ep", "pp", "dp"};
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", out);
    /* metadata first: names of the stages' processes and tracks */
    int64_t pp = p->task.detailed.pp > 0 ? p->task.detailed.pp : 1;
    for (int64_t s = 0; s < pp; s++) {
        fprintf(out, "%s{\"ph\":\"M\",\"pid\":%lld,\"name\":\"process_name\","
                     "\"args\":{\"name\":\"stage %lld\"}}",
                s ? ",\n" : "", (long long)s, (long long)s);
        for (int k = 0; k < DETAILED_NTRACKS; k++)
            fprintf(out, ",\n{\"ph\":\"M\",\"pid\":%lld,\"tid\":%d,\"name\":"
                         "\"thread_name\",\"args\":{\"name\":\"%s\"}}",
                    (long long)s, k, tracks[k]);
    }
    trace_sink k = {out, 0, 0, max_events, 0};
    double end = 0.0;
    *st = detailed_trace(p, trace_json_event, &k, &end);
    *dropped = k.dropped;
    fputs("\n],\"otherData\":{\"title\":", out);
    report_json_string(out, title);
    fputs(",\"makespan_s\":", out);
    report_json_number(out, end);
    fputs(",\"iteration_time_s\":", out);
    report_json_number(out, iteration_s);
    fprintf(out, ",\"events_dropped\":%lld}}\n", (long long)k.dropped);
    if (*st != STATUS_OK)
        return -1;
    return ferror(out) ? -1 : 0;
}
