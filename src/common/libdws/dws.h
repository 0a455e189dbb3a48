/* dws.h - umbrella header for libdws.
 *
 * libdws is the decision core of flux-dws: pure C11 + jansson, no Flux, no
 * I/O.  Each module has its own documented header; include this one to get
 * all of them (the cffi extension does).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_H
#define DWS_H

#include "config/rabbitconf.h"
#include "config/rconfig.h"
#include "config/userlimits.h"
#include "engine/engine.h"
#include "engine/limits.h"
#include "jobtap/dataout.h"
#include "jobtap/jobsm.h"
#include "parse/breakdown.h"
#include "parse/capacity.h"
#include "parse/directive.h"
#include "parse/labels.h"
#include "parse/policy.h"
#include "parse/ruleset.h"
#include "placement/jgf.h"
#include "placement/lustre.h"
#include "placement/rabbitmap.h"
#include "placement/rssd.h"
#include "placement/servers.h"
#include "util/error.h"
#include "util/f58.h"
#include "util/hostfind.h"
#include "util/hostindex.h"
#include "util/hostlist.h"
#include "util/idset.h"
#include "util/jsonio.h"
#include "util/memory.h"
#include "util/outbuf.h"
#include "util/strbuf.h"
#include "wire/explain.h"
#include "wire/jobkvs.h"
#include "wire/jobwire.h"
#include "wire/wire.h"

#endif /* !DWS_H */
