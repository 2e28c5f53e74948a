/* The one table of report formats (formats.h). */
#include "formats.h"

const tsa_report_format tsa_report_formats[] = {
#define TSA_REPORT_FORMAT_ROW(name, what, help) {#name, what, help, tsa_report_write_##name},
    TSA_REPORT_FORMATS(TSA_REPORT_FORMAT_ROW)
#undef TSA_REPORT_FORMAT_ROW
};

const size_t tsa_report_n_formats = sizeof tsa_report_formats / sizeof tsa_report_formats[0];
