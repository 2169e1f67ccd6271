// A sendtime stack: the stack's `sendtime:` config (`pulumi config set sendtime:<key> <value>`) read and checked
// by the library, one Sendtime built from it, and the outputs sendtime's commands read (their --outputs file).
import { Sendtime, sendtimeArgsFromConfig } from "sendtime/infra";

const app = new Sendtime("sendtime", sendtimeArgsFromConfig());

export = app.outputs;
