import sys, torch
from acas import *
torch.set_num_threads(1)
def boxes(prop):
    if prop=='prop_6':
        return [(torch.tensor([-0.129289109,0.11140846,-0.499999896,-0.5,-0.5]),torch.tensor([0.700434925,0.499999896,-0.499204121,0.5,0.5])),
                (torch.tensor([-0.129289109,-0.499999896,-0.499999896,-0.5,-0.5]),torch.tensor([0.700434925,-0.11140846,-0.499204121,0.5,0.5]))]
    return [read_box(prop)]
def margin(prop,y):
    if prop=='prop_1': return 3.991125645861615-y[:,0]
    if prop=='prop_2': return (y[:,1:]-y[:,:1]).max(1).values
    if prop in ('prop_3','prop_4'): return (y[:,:1]-y[:,1:]).max(1).values
    if prop=='prop_5': return (y[:,:4]-y[:,4:5]).min(1).values
    if prop=='prop_6': return (y[:,1:]-y[:,:1]).min(1).values
    if prop=='prop_9': return (y[:,[0,1,2,4]]-y[:,3:4]).min(1).values
for inst in sys.argv[1:]:
    net,prop=inst.split(':')
    fwd,sub,layers=load(net); best=1e9; bx=None
    for lo,hi in boxes(prop):
        lo=lo.double(); hi=hi.double()
        torch.manual_seed(0)
        x=(lo+(hi-lo)*torch.rand(5000,5)).requires_grad_(True); step=(hi-lo)*0.05
        for t in range(200):
            v=margin(prop,fwd(x)); g,=torch.autograd.grad(v.sum(),x)
            with torch.no_grad(): x-=step*g.sign(); x.copy_(torch.max(torch.min(x,hi),lo))
            step*=0.98
        with torch.no_grad():
            v=margin(prop,fwd(x)); i=v.argmin()
            if v[i]<best: best=float(v[i]); bx=x[i].clone()
            xs=lo+(hi-lo)*torch.rand(100000,5); vs=margin(prop,fwd(xs))
            fr={t:float((vs<t).double().mean()) for t in (0.01,0.05,0.2)}
            y=fwd(xs); scale=float((y.max(1).values-y.min(1).values).median())
    print(inst,'min margin %.5f'%best,'at',bx.numpy().round(4),'frac below',fr,'median output spread %.4f'%scale, flush=True)
