/*
 * trace.c - Chrome trace-event (JSON) writer for the two streams.
 */
#include "trace.h"

#include "report.h"

int trace_write(FILE *out, const engine *e, const char *title)
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
